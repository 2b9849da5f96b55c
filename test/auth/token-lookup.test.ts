import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { authenticate } from '../../src/auth/authenticate.js';
import { ManualClock } from '../../src/base/clock.js';
import { createUser } from '../helpers/server.js';
import { countingStatements } from '../helpers/statements.js';
import { useServer } from '../helpers/use-server.js';

const DAY = 86_400_000;

/** How a caller must be answered, by GET /login and by a route that requires authentication. */
interface Expected {
  token: string;
  login: { status: number; name?: string; logged: boolean };
  keys: { status: number; code?: string; message?: RegExp };
}

describe('authentication of requests that arrive together (one lookup statement for their tokens)', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({ clock });
  let expected: Expected[];

  before(async () => {
    const names = ['ann', 'bob', 'cid', 'dan', 'eve'];
    const ids = new Map<string, string>();
    for (const name of names) ids.set(name, await createUser(server, { name }));
    // dan's session is 31 days old by the time of the requests: expired.
    const dan = await server.login('dan', 'user-password-1');
    clock.advance(31 * DAY);
    const tokens = new Map<string, string>();
    for (const name of names.filter((n) => n !== 'dan'))
      tokens.set(name, await server.login(name, 'user-password-1'));
    const annKey = (await server.api('POST', '/api/key', { token: tokens.get('ann')!, body: {} })).body
      .id as string;
    const suspended = await server.api('PUT', `/users/${ids.get('cid')}`, {
      token: await server.login('admin@example.test', 'admin-password-1'),
      body: { status: 'suspended' },
    });
    assert.equal(suspended.status, 200);
    const valid = (token: string, name: string): Expected => ({
      token,
      login: { status: 200, name, logged: true },
      keys: { status: 200 },
    });
    expected = [
      valid(tokens.get('ann')!, 'ann'),
      valid(annKey, 'ann'),
      valid(tokens.get('bob')!, 'bob'),
      valid(tokens.get('eve')!, 'eve'),
      {
        token: tokens.get('cid')!,
        login: { status: 401, logged: false },
        keys: { status: 401, code: 'UNAUTHENTICATED', message: /suspended/ },
      },
      {
        token: dan,
        login: { status: 200, logged: false },
        keys: { status: 401, code: 'UNAUTHENTICATED', message: /expired/ },
      },
      {
        token: 'no-such-token-0123456789012345678901234567890',
        login: { status: 200, logged: false },
        keys: { status: 401, code: 'UNAUTHENTICATED', message: /not valid/ },
      },
    ];
  });

  it('sixty concurrent requests with seven different tokens: each is answered as its own token’s caller', async () => {
    const calls = Array.from({ length: 60 }, (_, i) => ({
      expect: expected[(i * 5) % expected.length]!,
      route: i % 3 === 0 ? ('/api/key' as const) : ('/login' as const),
    }));
    const answers = await Promise.all(
      calls.map((call) => server.api('GET', call.route, { token: call.expect.token })),
    );
    answers.forEach((answer, i) => {
      const { expect, route } = calls[i]!;
      const where = `${route} #${i}`;
      if (route === '/login') {
        assert.equal(answer.status, expect.login.status, where);
        if (answer.status === 200) {
          assert.equal(answer.body.logged, expect.login.logged, where);
          assert.equal(answer.body.user?.name, expect.login.name, where);
        }
      } else {
        assert.equal(answer.status, expect.keys.status, where);
        if (expect.keys.code) assert.equal(answer.body.code, expect.keys.code, where);
        if (expect.keys.message) assert.match(answer.body.message, expect.keys.message, where);
      }
    });
  });

  it('the tokens of calls made in one turn are read by a single statement', async () => {
    const counted = countingStatements(server.app.deps.db);
    const deps = { ...server.app.deps, db: counted.db };
    // Once each first: a token's first use records last_used_at, a statement of its own.
    for (const { token } of expected) await authenticate(deps, token, 'warm-up');
    counted.reset();
    const results = await Promise.all(expected.map(({ token }) => authenticate(deps, token, 'together')));
    assert.equal(counted.statements, 1);
    assert.deepEqual(
      results.map((result) => (result.outcome === 'ok' ? result.actor.name : result.outcome)),
      ['ann', 'ann', 'bob', 'eve', 'suspended', 'expired', 'unknown'],
    );
  });
});

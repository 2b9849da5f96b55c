import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { createUser } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

describe('brute-force throttling of logins, per account and per address', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({
    clock,
    env: {
      LOGIN_MAX_FAILURES_PER_ACCOUNT: '3',
      LOGIN_MAX_FAILURES_PER_ADDRESS: '8',
      LOGIN_WINDOW_SECONDS: '600',
    },
  });

  it('after the allowed failures on one account even the right password gets 429 RATE_LIMITED with Retry-After, until the window passes', async () => {
    await createUser(server, { name: 'target' });
    for (let i = 0; i < 3; i++) {
      const r = await server.api('POST', '/login', {
        body: { name: 'target', password: `bad-${i}-password` },
      });
      assert.equal(r.status, 401);
    }
    const blocked = await server.api('POST', '/login', {
      body: { name: 'target', password: 'user-password-1' },
    });
    assert.equal(blocked.status, 429);
    assert.equal(blocked.body.code, 'RATE_LIMITED');
    const retryAfter = Number(blocked.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 600, `Retry-After ${retryAfter}`);
    clock.advance(601_000);
    const allowed = await server.api('POST', '/login', {
      body: { name: 'target', password: 'user-password-1' },
    });
    assert.equal(allowed.status, 200);
  });

  it('names that do not exist are throttled the same way, so the answer does not reveal which exist', async () => {
    for (let i = 0; i < 3; i++)
      await server.api('POST', '/login', { body: { name: 'ghost', password: 'bad-password' } });
    const blocked = await server.api('POST', '/login', { body: { name: 'ghost', password: 'bad-password' } });
    assert.equal(blocked.status, 429);
    clock.advance(601_000);
  });

  it('one address failing on many accounts is throttled after the per-address allowance', async () => {
    await createUser(server, { name: 'victim' });
    for (let i = 0; i < 8; i++) {
      await server.api('POST', '/login', { body: { name: `spray-${i}`, password: 'bad-password' } });
    }
    const blocked = await server.api('POST', '/login', {
      body: { name: 'victim', password: 'user-password-1' },
    });
    assert.equal(blocked.status, 429);
    clock.advance(601_000);
    const allowed = await server.api('POST', '/login', {
      body: { name: 'victim', password: 'user-password-1' },
    });
    assert.equal(allowed.status, 200);
  });
});

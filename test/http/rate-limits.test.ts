import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createClient } from '@redis/client';
import { ManualClock } from '../../src/base/clock.js';
import { ConfigError, loadConfig } from '../../src/base/config.js';
import { makePdf } from '../helpers/pdf.js';
import { makeStore, startServer, upload, type ApiResponse, type TestServer } from '../helpers/server.js';
import { shareTokenOf, startSmtp, type TestSmtp } from '../helpers/smtp.js';

/** The Redis server the Redis mode is tested against (`.ci/run` sets it; this machine runs one). */
const TEST_REDIS_URL = process.env.TEST_REDIS_URL;

const MINUTE = 60_000;

/** A clock 18 s into a minute: every window then ends in 42 s, so `t` and Retry-After are known. */
function clockAt18s(): ManualClock {
  return new ManualClock(new Date(Math.floor(Date.now() / MINUTE) * MINUTE + 18_000));
}

function limits(perMinute: number, anonymousPerMinute: number, extra: Record<string, string> = {}) {
  return {
    RATE_LIMIT_PER_MINUTE: String(perMinute),
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: String(anonymousPerMinute),
    ...extra,
  };
}

function assertFields(response: ApiResponse, policy: string, limit: number, remaining: number, t?: number) {
  assert.equal(response.headers.get('ratelimit-policy'), `"${policy}";q=${limit};w=60`, response.text);
  const field = response.headers.get('ratelimit') ?? '';
  assert.match(field, new RegExp(`^"${policy}";r=${remaining};t=\\d+$`), `RateLimit: ${field}`);
  if (t !== undefined) assert.equal(field, `"${policy}";r=${remaining};t=${t}`);
}

function assertRefused(response: ApiResponse, policy: string, limit: number, retryAfter?: number) {
  assert.equal(response.status, 429, response.text);
  assert.equal(response.body.statusCode, 429);
  assert.equal(response.body.error, 'Too Many Requests');
  assert.equal(response.body.code, 'RATE_LIMITED');
  assert.match(response.body.message, new RegExp(`at most ${limit} a minute`));
  assert.deepEqual(Object.keys(response.body).sort(), ['code', 'error', 'message', 'statusCode']);
  const seconds = Number(response.headers.get('retry-after'));
  assert.ok(Number.isInteger(seconds) && seconds >= 1 && seconds <= 60, `Retry-After: ${seconds}`);
  if (retryAfter !== undefined) assert.equal(seconds, retryAfter);
  // Retry-After points at the end of the effective window, never before it (the draft, section 6).
  assertFields(response, policy, limit, 0, seconds);
}

/** GET /login with a token: the cheapest authenticated call. */
const whoAmI = (server: TestServer, token: string) => server.api('GET', '/login', { token });

/** The rows of the shared counts, as the database holds them. */
async function storedCounts(server: TestServer) {
  return server.app.deps.db.selectFrom('rate_limit_windows').selectAll().execute();
}

/**
 * Issue 21, "Operations": rate limits an integrator can see. "Per API key and per session
 * (configurable, with sensible defaults), answered with 429 and Retry-After, and the IETF
 * RateLimit-Policy/RateLimit headers on every answer; shared across nodes through the database (or
 * Redis when REDIS_URL is set)."
 */
describe('rate limits an integrator can see', () => {
  describe('one node', () => {
    const servers: TestServer[] = [];
    const start = async (options: Parameters<typeof startServer>[0]) => {
      const server = await startServer(options);
      servers.push(server);
      return server;
    };
    after(async () => {
      for (const server of servers) await server.close();
    });
    /** A node on a clock at 18 s into its minute with `env`, and the administrator's session. */
    const startAt18s = async (env: Record<string, string>) => {
      const clock = clockAt18s();
      const server = await start({ clock, env });
      return { clock, server, token: await server.adminToken() };
    };

    it('every answer of a limited route carries RateLimit-Policy and a decreasing RateLimit; past the limit, 429 RATE_LIMITED with Retry-After, and nothing of the token', async () => {
      const server = await start({ clock: clockAt18s(), env: limits(3, 100) });
      const token = await server.adminToken();
      for (const remaining of [2, 1, 0]) {
        const answer = await whoAmI(server, token);
        assert.equal(answer.status, 200, answer.text);
        assertFields(answer, 'session', 3, remaining, 42);
      }
      const refused = await whoAmI(server, token);
      assertRefused(refused, 'session', 3, 42);
      assert.match(refused.body.message, /per session; try again in 42 s/);
      // Nothing of the credential comes back, in the body or any header.
      assert.ok(!refused.text.includes(token));
      for (const [name, value] of refused.headers) assert.ok(!value.includes(token), `header ${name}`);
      // Any limited route refuses the caller, whatever it asks.
      assertRefused(await server.api('GET', '/documents/no-such-document', { token }), 'session', 3);
    });

    it('the count starts again when the window ends', async () => {
      const { clock, server, token } = await startAt18s(limits(2, 100));
      await whoAmI(server, token);
      await whoAmI(server, token);
      assertRefused(await whoAmI(server, token), 'session', 2, 42);
      clock.advance(41_000);
      assertRefused(await whoAmI(server, token), 'session', 2, 1);
      clock.advance(1_000);
      const again = await whoAmI(server, token);
      assert.equal(again.status, 200, again.text);
      assertFields(again, 'session', 2, 1, 60);
    });

    it('a refused credential counts against the client address: made-up tokens get no fresh allowance', async () => {
      const server = await start({ env: limits(100, 3) });
      const token = await server.adminToken(); // POST /login: the address's first request
      for (const [remaining, made] of [
        [1, randomBytes(32).toString('base64url')],
        [0, `shr_${randomBytes(32).toString('base64url')}`],
      ] as const) {
        const answer = await server.api('GET', '/documents/no-such-document', { token: made });
        assert.equal(answer.status, 401, answer.text);
        assertFields(answer, 'anonymous', 3, remaining);
      }
      // A 429 rather than a 401 now, for any request from the address that has no valid credential.
      assertRefused(
        await server.api('GET', '/documents/no-such-document', {
          token: randomBytes(32).toString('base64url'),
        }),
        'anonymous',
        3,
      );
      assertRefused(
        await server.api('POST', '/login', { body: { name: 'x', password: 'y' } }),
        'anonymous',
        3,
      );
      // The valid session has its own count.
      const mine = await whoAmI(server, token);
      assert.equal(mine.status, 200, mine.text);
      assertFields(mine, 'session', 100, 99);
    });

    it('health probes and metrics are never limited, nor routes that do not exist; other public routes count against the address', async () => {
      const server = await start({ env: limits(100, 1) });
      for (let i = 0; i < 3; i++) {
        for (const path of ['//healthz', '//readyz', '//metrics', '/ping']) {
          const answer = await server.api('GET', path);
          assert.equal(answer.status, 200, `${path}: ${answer.text}`);
          assert.equal(answer.headers.get('ratelimit'), null, path);
          assert.equal(answer.headers.get('ratelimit-policy'), null, path);
        }
        assert.equal((await server.api('GET', '/no-such-endpoint')).status, 404);
        // The signer page's own files neither (a PDF with many fonts fetches many character maps).
        const asset = await server.api('GET', '//web/assets/index.js');
        assert.equal(asset.headers.get('ratelimit'), null, 'page assets');
      }
      const first = await server.api('GET', '/openapi.json');
      assert.equal(first.status, 200);
      assertFields(first, 'anonymous', 1, 0);
      assertRefused(await server.api('GET', '/openapi.json'), 'anonymous', 1);
    });

    it('RATE_LIMIT=off: no limit and no RateLimit fields', async () => {
      const server = await start({ env: limits(1, 1, { RATE_LIMIT: 'off' }) });
      const token = await server.adminToken();
      for (let i = 0; i < 3; i++) {
        const answer = await whoAmI(server, token);
        assert.equal(answer.status, 200, answer.text);
        assert.equal(answer.headers.get('ratelimit'), null);
      }
      assert.deepEqual(await storedCounts(server), []);
    });

    it('the shared counts hold only hashes, and windows that ended are deleted', async () => {
      const { clock, server, token } = await startAt18s(limits(10, 100));
      await whoAmI(server, token);
      await whoAmI(server, token);
      await server.app.rateLimiter!.sync();
      const rows = await storedCounts(server);
      const windowStart = Math.floor(clock.now().getTime() / MINUTE) * MINUTE;
      assert.deepEqual(rows.map((r) => [Number(r.window_start_ms), r.count]).sort(), [
        [windowStart, 1], // the address's POST /login
        [windowStart, 2], // the session's two calls
      ]);
      for (const row of rows) assert.match(row.bucket, /^[0-9a-f]{64}$/);
      const tokenId = (await server.app.deps.db.selectFrom('auth_tokens').select('id').execute()).map(
        (t) => t.id,
      );
      const stored = JSON.stringify(rows);
      for (const secret of [token, ...tokenId, '127.0.0.1']) assert.ok(!stored.includes(secret));

      clock.advance(2 * MINUTE);
      await whoAmI(server, token);
      await server.app.rateLimiter!.sync();
      assert.deepEqual(
        (await storedCounts(server)).map((r) => [Number(r.window_start_ms), r.count]),
        [[windowStart + 2 * MINUTE, 1]],
      );
    });
  });

  describe('separate counts for each API key, session, recipient link, recipient session and client address', () => {
    const clock = clockAt18s();
    let smtp: TestSmtp;
    let server: TestServer;
    before(async () => {
      smtp = await startSmtp();
      server = await startServer({ clock, env: limits(2, 3, { SMTP_URL: smtp.url }) });
    });
    after(async () => {
      await server.close();
      await smtp.close();
    });

    /**
     * A document shared with an external recipient: its link. Each call goes in a window of its own,
     * so that set-up fits the small limits.
     */
    async function anExternalShare(owner: string, shareTo: string, password?: string) {
      clock.advance(MINUTE);
      const pdf = await upload(server, owner, makePdf({ pages: 1 }));
      clock.advance(MINUTE);
      const created = await server.api('POST', '/documents', {
        token: owner,
        body: { body: { documentTitle: shareTo, pdfFile: { content: pdf } } },
      });
      const id = created.body.results[0].documentId as string;
      clock.advance(MINUTE);
      const shared = await server.api('POST', '/share', {
        token: owner,
        body: { id, data: [{ sharePurpose: 'sign', shareTo, ...(password ? { password } : {}) }] },
      });
      assert.equal(shared.status, 200, shared.text);
      return shareTokenOf(await smtp.waitFor(shareTo, new RegExp(shareTo)));
    }

    it('using up one count leaves every other untouched', async () => {
      // Set-up, each call in a window of its own so that it fits the small limits.
      const calls = async <T>(work: () => Promise<T>) => {
        clock.advance(MINUTE);
        return work();
      };
      const session = await calls(() => server.adminToken());
      const other = await calls(() => server.login('admin@example.test', 'admin-password-1'));
      const apiKey = await calls(async () => {
        const created = await server.api('POST', '/api/key', { token: session, body: {} });
        assert.equal(created.status, 200, created.text);
        return created.body.id as string;
      });
      const link = await anExternalShare(session, 'open@example.org');
      const protectedLink = await anExternalShare(other, 'locked@example.org', 'open-sesame');
      const recipientSession = await calls(async () => {
        const unlocked = await server.api('POST', '/share/unlock', {
          token: protectedLink,
          body: { password: 'open-sesame' },
        });
        assert.equal(unlocked.status, 200, unlocked.text);
        return unlocked.body.token as string;
      });

      clock.advance(MINUTE);
      // The session uses up its count...
      assertFields(await whoAmI(server, session), 'session', 2, 1);
      assertFields(await whoAmI(server, session), 'session', 2, 0);
      assertRefused(await whoAmI(server, session), 'session', 2);
      // ...and the others still have all of theirs.
      assertFields(await whoAmI(server, other), 'session', 2, 1);
      const byKey = await whoAmI(server, apiKey);
      assert.equal(byKey.status, 200, byKey.text);
      assertFields(byKey, 'api-key', 2, 1);
      for (const remaining of [1, 0]) {
        const shown = await server.api('GET', '/share/document', { token: link });
        assert.equal(shown.status, 200, shown.text);
        assertFields(shown, 'recipient', 2, remaining);
      }
      assertRefused(await server.api('GET', '/share/document', { token: link }), 'recipient', 2);
      // A recipient session is counted apart from its link, which stays locked (403) but has its own count.
      const bySession = await server.api('GET', '/share/document', { token: recipientSession });
      assert.equal(bySession.status, 200, bySession.text);
      assertFields(bySession, 'recipient', 2, 1);
      const byLockedLink = await server.api('GET', '/share/document', { token: protectedLink });
      assert.equal(byLockedLink.status, 403, byLockedLink.text);
      assertFields(byLockedLink, 'recipient', 2, 1);
      // Calls without a credential count against the client address.
      const anonymous = await server.api('GET', '/login');
      assert.equal(anonymous.status, 200, anonymous.text);
      assertFields(anonymous, 'anonymous', 3, 2);
    });
  });

  /** Two nodes over one store, one clock: the same window on both. */
  async function twoNodes(env: Record<string, string>) {
    const clock = clockAt18s();
    const a = await startServer({ clock, env });
    const b = await startServer({ clock, env, sameStoreAs: a });
    const close = async () => {
      await b.close();
      await a.close();
    };
    return { a, b, close };
  }

  /** Neither node alone reaches the limit of 4, yet once they have synced both refuse. */
  async function assertClusterLimit(a: TestServer, b: TestServer) {
    const token = await a.adminToken();
    for (let i = 0; i < 3; i++) assert.equal((await whoAmI(a, token)).status, 200);
    await a.app.rateLimiter!.sync();
    // B has not synced since it started: it lets this one through on its own count (the documented
    // approximation of one sync interval).
    assert.equal((await whoAmI(b, token)).status, 200);
    await b.app.rateLimiter!.sync();
    assertRefused(await whoAmI(b, token), 'session', 4);
    // A, now in the last tenth of the limit, reads the cluster's total before answering.
    assertRefused(await whoAmI(a, token), 'session', 4);
    return token;
  }

  it('two nodes over the same database share one limit: the cluster total is enforced once they have synced', async () => {
    const { a, b, close } = await twoNodes(limits(4, 100));
    try {
      await assertClusterLimit(a, b);
      await b.app.rateLimiter!.sync();
      const counts = (await storedCounts(a)).map((r) => r.count).sort();
      assert.deepEqual(counts, [1, 6]); // the address's login; the session's six calls on both nodes
    } finally {
      await close();
    }
  });

  it('nodes send their counts by themselves every RATE_LIMIT_SYNC_MS', async () => {
    const server = await startServer({ env: limits(100, 100, { RATE_LIMIT_SYNC_MS: '50' }) });
    try {
      const token = await server.adminToken();
      await whoAmI(server, token);
      await whoAmI(server, token);
      const deadline = Date.now() + 5_000;
      let counts: number[] = [];
      while (Date.now() < deadline) {
        counts = (await storedCounts(server)).map((r) => r.count).sort();
        if (counts.length === 2 && counts[1] === 2) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      assert.deepEqual(counts, [1, 2]);
    } finally {
      await server.close();
    }
  });

  describe(
    'with REDIS_URL, the nodes share their counts through Redis',
    { skip: !TEST_REDIS_URL && 'TEST_REDIS_URL is not set (.ci/run sets it)' },
    () => {
      it('two nodes share one limit, with keys under REDIS_KEY_PREFIX that expire, and nothing in the database', async () => {
        const prefix = `signery-test-${randomBytes(6).toString('hex')}:`;
        const redis = createClient({ url: TEST_REDIS_URL });
        await redis.connect();
        const { a, b, close } = await twoNodes(
          limits(4, 100, { REDIS_URL: TEST_REDIS_URL!, REDIS_KEY_PREFIX: prefix }),
        );
        try {
          const token = await assertClusterLimit(a, b);
          await b.app.rateLimiter!.sync();
          const keys = await redis.keys(`${prefix}*`);
          assert.equal(keys.length, 2, keys.join(', '));
          for (const key of keys) {
            assert.match(key, new RegExp(`^${prefix}ratelimit:[0-9a-f]{64}:\\d+$`));
            assert.ok(!key.includes(token));
            const ttl = await redis.pTTL(key);
            assert.ok(ttl > 0 && ttl <= 2 * MINUTE, `TTL ${ttl}`);
          }
          assert.deepEqual((await Promise.all(keys.map((k) => redis.get(k)))).map(Number).sort(), [1, 6]);
          assert.deepEqual(await storedCounts(a), []);
        } finally {
          await close();
          const keys = await redis.keys(`${prefix}*`);
          if (keys.length > 0) await redis.del(keys);
          await redis.close();
        }
      });
    },
  );

  it('a REDIS_URL that does not answer stops the start with a clear error', async () => {
    const store = await makeStore('redis-down');
    try {
      await assert.rejects(
        startServer({ env: { ...store.env, REDIS_URL: 'redis://127.0.0.1:1' } }),
        /Redis \(REDIS_URL\) did not answer/,
      );
    } finally {
      await store.remove();
    }
  });

  it('the settings are checked at start', () => {
    assert.throws(() => loadConfig({ RATE_LIMIT: 'sometimes' }), ConfigError);
    assert.throws(() => loadConfig({ RATE_LIMIT_PER_MINUTE: '0' }), /RATE_LIMIT_PER_MINUTE/);
    assert.throws(() => loadConfig({ REDIS_URL: 'http://127.0.0.1:6379' }), /REDIS_URL/);
    const defaults = loadConfig({}).rateLimits;
    // publicVerifyPerMinute: the public verification page's checks (issue 27).
    assert.deepEqual(defaults, {
      enabled: true,
      perMinute: 1000,
      anonymousPerMinute: 300,
      publicVerifyPerMinute: 20,
      syncMs: 1000,
    });
    assert.throws(() => loadConfig({ RATE_LIMIT_PUBLIC_VERIFY_PER_MINUTE: '0' }), /RATE_LIMIT_PUBLIC_VERIFY/);
    assert.deepEqual(loadConfig({}).publicVerify, { enabled: true, maxBytes: 50 * 1024 * 1024 });
    assert.throws(() => loadConfig({ PUBLIC_VERIFY: 'maybe' }), /PUBLIC_VERIFY must be on or off/);
    assert.throws(() => loadConfig({ PUBLIC_VERIFY_MAX_MB: '0' }), /PUBLIC_VERIFY_MAX_MB/);
    assert.equal(loadConfig({ RATE_LIMIT: 'off' }).rateLimits.enabled, false);
  });
});

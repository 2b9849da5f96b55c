import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { postCallback } from '../../src/webhooks/post-callback.js';
import {
  checkCallbackUrl,
  forbiddenRange,
  guardedAgents,
  type CallbackPolicy,
  type Resolver,
} from '../../src/webhooks/ssrf-guard.js';
import { ADMIN } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { emit, scopeOf, sleep, useReceiver, waitFor } from './helpers.js';

describe('SSRF guard: callback URLs must be public http(s) (Contract: WEBHOOK_ALLOW_PRIVATE, off by default)', () => {
  it('classifies loopback, private, link-local, unique-local, CGNAT, multicast, unspecified and IPv4-in-IPv6 addresses as forbidden', () => {
    const forbidden = [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.251',
      '255.255.255.255',
      '::1',
      '::',
      'fe80::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:a00:1',
      '64:ff9b::a9fe:a9fe',
      '2002:c0a8:101::1',
    ];
    for (const address of forbidden) assert.ok(forbiddenRange(address), `${address} is forbidden`);
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      assert.equal(forbiddenRange(address), undefined, `${address} is public`);
  });

  it('refuses non-http(s) URLs and hosts resolving to a forbidden address; allows anything http(s) when private targets are allowed', async () => {
    const loopback: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const mixed: Resolver = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.7', family: 4 },
    ];
    await assert.rejects(checkCallbackUrl('file:///etc/passwd', { allowPrivate: false }), /http/);
    await assert.rejects(checkCallbackUrl('gopher://x', { allowPrivate: true }), /http/);
    await assert.rejects(
      checkCallbackUrl('http://internal.test/', { allowPrivate: false, resolve: loopback }),
      /127\.0\.0\.1 \(loopback\)/,
    );
    await assert.rejects(
      checkCallbackUrl('http://mixed.test/', { allowPrivate: false, resolve: mixed }),
      /every|10\.0\.0\.7/,
      'every address must be public',
    );
    assert.deepEqual(
      await checkCallbackUrl('https://public.test/hook', {
        allowPrivate: false,
        resolve: async () => [{ address: '93.184.216.34', family: 4 }],
      }),
      ['93.184.216.34'],
    );
    assert.deepEqual(await checkCallbackUrl('http://127.0.0.1:1/', { allowPrivate: true }), []);
  });

  describe('the connection is pinned to a checked address', () => {
    const receiver = useReceiver();

    it('connects to the address its own checked lookup returned (the host name is never resolved again)', async () => {
      const policy: CallbackPolicy = {
        allowPrivate: false,
        resolve: async (host) => {
          assert.equal(host, 'pinned.test');
          return [{ address: '127.0.0.1', family: 4 }];
        },
        // This test's stand-in for a public address: the receiver's loopback one.
        classify: (address) => (address === '127.0.0.1' ? undefined : forbiddenRange(address)),
      };
      const agents = guardedAgents(policy);
      try {
        const port = new URL(receiver.url).port;
        const result = await postCallback(
          `http://pinned.test:${port}/hook`,
          { policy, agents },
          '{"documentId":"d","event":"documentCreated","actor":"a","timestamp":"t"}',
          { 'content-type': 'application/json' },
        );
        assert.equal(result.statusCode, 200, String(result.error));
        assert.equal(receiver.received.at(-1)?.headers.host, `pinned.test:${port}`);
      } finally {
        agents.close();
      }
    });

    it('DNS rebinding: a host that resolved to a public address at the check and to loopback at connect time is refused before connecting', async () => {
      const before = receiver.received.length;
      let lookups = 0;
      const policy: CallbackPolicy = {
        allowPrivate: false,
        resolve: async () => {
          lookups += 1;
          return [{ address: lookups === 1 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
        },
      };
      const port = new URL(receiver.url).port;
      const url = `http://rebind.test:${port}/hook`;
      const agents = guardedAgents(policy);
      try {
        // postCallback checks the URL first (the public answer), then connects (the loopback one).
        const result = await postCallback(url, { policy, agents }, '{}', {});
        assert.equal(result.statusCode, null);
        assert.match(String(result.error), /^refused: .*loopback/);
      } finally {
        agents.close();
      }
      assert.equal(lookups, 2);
      assert.equal(receiver.received.length, before, 'nothing reached the receiver');
    });
  });

  describe('in a server without WEBHOOK_ALLOW_PRIVATE', () => {
    const server = useServer();
    let admin: string;
    const receiver = useReceiver();
    before(async () => (admin = await server.adminToken()));

    it('POST /webhooks refuses loopback, private, link-local and IPv6 loopback targets, and names that resolve to loopback: 400 VALIDATION_ERROR', async () => {
      const port = new URL(receiver.url).port;
      for (const callbackUrl of [
        `http://127.0.0.1:${port}/hook`,
        'http://10.0.0.1/hook',
        'http://169.254.169.254/latest/meta-data',
        'http://[::1]/hook',
        'http://[::ffff:127.0.0.1]/hook',
        `http://localhost:${port}/hook`,
        'http://2130706433/hook',
        'http://0.0.0.0/hook',
      ]) {
        const response = await server.api('POST', '/webhooks', {
          token: admin,
          body: { type: 'tenant', callbackUrl },
        });
        assert.equal(response.status, 400, callbackUrl);
        assert.equal(response.body.code, 'VALIDATION_ERROR');
        assert.match(response.body.message, /public addresses/);
      }
      assert.equal((await server.api('GET', '/webhooks', { token: admin })).body.total, 0);
    });

    it('at delivery a callback resolving to a private address is refused too: the attempt is recorded as failed and nothing is sent', async () => {
      const scope = await scopeOf(server, ADMIN.name);
      const port = new URL(receiver.url).port;
      const user = await server.app.deps.db
        .selectFrom('users')
        .select(['id', 'name'])
        .where('name', '=', ADMIN.name)
        .executeTakeFirstOrThrow();
      // As if these hosts had resolved to public addresses when the webhooks were created.
      const hooks = [`http://localhost:${port}/hook`, `http://127.0.0.1:${port}/hook`].map((callbackUrl) => ({
        id: randomUUID(),
        tenant_id: scope.tenantId,
        type: 'tenant' as const,
        organization_id: null,
        name: scope.tenantId,
        callback_url: callbackUrl,
        hmac_secret: 'secret-of-a-rebound-webhook',
        creator_id: user.id,
        creator_name: user.name,
        created_at: new Date().toISOString(),
      }));
      await server.app.deps.db.insertInto('webhooks').values(hooks).execute();
      await emit(server, scope, 'documentCreated', 'doc-ssrf');
      for (const hook of hooks) {
        await waitFor(
          async () =>
            (await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: admin })).body.results[0]
              ?.attempts.length === 1,
          10_000,
          'the refused attempt',
        );
        const [delivery] = (await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: admin })).body
          .results;
        assert.equal(delivery.status, 'retrying');
        assert.equal(delivery.attempts[0].statusCode, null);
        assert.equal(delivery.attempts[0].success, false);
        assert.match(delivery.attempts[0].error, /^refused: .*loopback/);
      }
      await sleep(100);
      assert.equal(receiver.received.length, 0, 'nothing reached the receiver');
    });
  });
});

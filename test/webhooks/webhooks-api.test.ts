import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ADMIN, createUser } from '../helpers/server.js';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';
import { createWebhook, emit, scopeOf, startReceiver, useReceiver, waitFor } from './helpers.js';

describe('spec: Webhooks (POST/GET/DELETE /webhooks) and their rules', () => {
  const server = useServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  let admin: string;
  const receiver = useReceiver();
  let sales: string;
  let legal: string;
  before(async () => {
    admin = await server.adminToken();
    await createUser(server, { name: 'sales-admin', role: 'organizationAdmin', organization: 'Sales' });
    await createUser(server, { name: 'legal-admin', role: 'organizationAdmin', organization: 'Legal' });
    await createUser(server, { name: 'sales-rep', organization: 'Sales' });
    await createUser(server, { name: 'sales-hooker', organization: 'Sales', rights: ['use_webhooks'] });
    sales = (await scopeOf(server, 'sales-admin')).organizationId;
    legal = (await scopeOf(server, 'legal-admin')).organizationId;
  });

  it('"right use_webhooks is needed": without it every webhook call is 403 FORBIDDEN', async () => {
    const token = await server.login('sales-rep', 'user-password-1');
    const hook = await createWebhook(server, admin, { type: 'tenant', callbackUrl: receiver.url });
    const calls = [
      server.api('POST', '/webhooks', { token, body: { type: 'organization', callbackUrl: receiver.url } }),
      server.api('GET', '/webhooks', { token }),
      server.api('DELETE', `/webhooks/${hook.id}`, { token }),
      server.api('GET', `/webhooks/${hook.id}/deliveries`, { token }),
    ];
    for (const response of await Promise.all(calls)) {
      assert.equal(response.status, 403, response.text);
      assert.equal(response.body.code, 'FORBIDDEN');
    }
    await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin });
  });

  it('"an organization administrator creates webhooks only for the own organization and lists only those"', async () => {
    const token = await server.login('sales-admin', 'user-password-1');
    const own = await server.api('POST', '/webhooks', {
      token,
      body: { type: 'organization', callbackUrl: receiver.url },
    });
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body.type, 'organization');
    assert.equal(own.body.name, sales, 'name defaults to the creator’s organization');
    assert.equal(own.body.creator, 'sales-admin');
    assert.match(
      own.body.hmacSecret,
      /^whsec_[A-Za-z0-9+/]{43}=$/,
      'a secret is generated when none is given',
    );
    assert.ok(own.body.createDate);

    const tenant = await server.api('POST', '/webhooks', {
      token,
      body: { type: 'tenant', callbackUrl: receiver.url },
    });
    assert.equal(tenant.status, 403);
    const other = await server.api('POST', '/webhooks', {
      token,
      body: { type: 'organization', name: legal, callbackUrl: receiver.url },
    });
    assert.equal(other.status, 403);
    assert.equal(other.body.code, 'FORBIDDEN');

    const legalHook = await createWebhook(server, admin, {
      type: 'organization',
      name: legal,
      callbackUrl: receiver.url,
    });
    const tenantHook = await createWebhook(server, admin, { type: 'tenant', callbackUrl: receiver.url });
    const list = await server.api('GET', '/webhooks', { token });
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.results.map((w: { id: string }) => w.id),
      [own.body.id],
    );
    assert.equal(list.body.total, 1);
    assert.equal(list.body.results[0].hmacSecret, undefined, 'the secret is shown to the creator only');

    for (const hidden of [legalHook.id, tenantHook.id, 'no-such-webhook']) {
      const removed = await server.api('DELETE', `/webhooks/${hidden}`, { token });
      assert.equal(removed.status, 404, 'another scope’s webhook is not found');
      assert.equal(removed.body.code, 'NOT_FOUND');
      assert.equal((await server.api('GET', `/webhooks/${hidden}/deliveries`, { token })).status, 404);
    }
    for (const id of [own.body.id, legalHook.id, tenantHook.id]) {
      assert.deepEqual((await server.api('DELETE', `/webhooks/${id}`, { token: admin })).body, {
        status: 'SUCCESS',
      });
    }
  });

  it('"a global administrator can target the whole tenant or one organization and lists all"', async () => {
    const tenantHook = await createWebhook(server, admin, {
      type: 'tenant',
      callbackUrl: receiver.url,
      hmacSecret: 'a-secret-of-my-own-choosing',
    });
    assert.equal(tenantHook.hmacSecret, 'a-secret-of-my-own-choosing');
    assert.equal(tenantHook.type, 'tenant');
    const legalHook = await createWebhook(server, admin, {
      type: 'organization',
      name: legal,
      callbackUrl: receiver.url,
    });
    assert.equal(legalHook.name, legal);
    const salesToken = await server.login('sales-admin', 'user-password-1');
    const salesHook = await createWebhook(server, salesToken, {
      type: 'organization',
      callbackUrl: receiver.url,
    });

    const global = (await aUser(server, { name: 'global', role: 'globalAdmin' })).token;
    const list = await server.api('GET', '/webhooks', { token: global });
    assert.deepEqual(
      list.body.results.map((w: { id: string }) => w.id).sort(),
      [tenantHook.id, legalHook.id, salesHook.id].sort(),
    );
    assert.equal(
      (
        await server.api('POST', '/webhooks', {
          token: admin,
          body: { type: 'organization', name: 'no-such-org', callbackUrl: receiver.url },
        })
      ).status,
      404,
    );
    for (const id of [tenantHook.id, legalHook.id, salesHook.id]) {
      assert.equal((await server.api('DELETE', `/webhooks/${id}`, { token: global })).status, 200);
    }
    assert.equal((await server.api('GET', '/webhooks', { token: global })).body.total, 0);
  });

  it('a plain user granted use_webhooks creates webhooks for the own organization only, which its administrators reach too', async () => {
    const token = await server.login('sales-hooker', 'user-password-1');
    const own = await createWebhook(server, token, { type: 'organization', callbackUrl: receiver.url });
    assert.equal(own.name, sales);
    assert.equal(
      (await server.api('POST', '/webhooks', { token, body: { type: 'tenant', callbackUrl: receiver.url } }))
        .status,
      403,
    );
    const salesAdmin = await server.login('sales-admin', 'user-password-1');
    const list = await server.api('GET', '/webhooks', { token: salesAdmin });
    assert.ok(
      list.body.results.some((w: { id: string }) => w.id === own.id),
      'an organization webhook is the organization’s',
    );
    await server.api('DELETE', `/webhooks/${own.id}`, { token });
  });

  it('"a webhook covers all events in its scope": tenant webhooks get every organization’s events, organization webhooks only their own', async () => {
    const tenantReceiver = await startReceiver();
    const salesReceiver = await startReceiver();
    const legalReceiver = await startReceiver();
    try {
      const hooks = [
        await createWebhook(server, admin, { type: 'tenant', callbackUrl: tenantReceiver.url }),
        await createWebhook(server, admin, {
          type: 'organization',
          name: sales,
          callbackUrl: salesReceiver.url,
        }),
        await createWebhook(server, admin, {
          type: 'organization',
          name: legal,
          callbackUrl: legalReceiver.url,
        }),
      ];
      const { tenantId } = await scopeOf(server, ADMIN.name);
      await emit(server, { tenantId, organizationId: sales }, 'documentCreated', 'doc-sales');
      await emit(server, { tenantId, organizationId: legal }, 'documentSigned', 'doc-legal');
      await waitFor(
        () =>
          tenantReceiver.received.length === 2 &&
          salesReceiver.received.length === 1 &&
          legalReceiver.received.length === 1,
        10_000,
        'deliveries',
      );
      assert.deepEqual(
        tenantReceiver.received.map((r) => r.json.documentId),
        ['doc-sales', 'doc-legal'],
      );
      assert.equal(salesReceiver.received[0]?.json.documentId, 'doc-sales');
      assert.equal(legalReceiver.received[0]?.json.documentId, 'doc-legal');
      for (const hook of hooks) await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin });
    } finally {
      await Promise.all([tenantReceiver.close(), salesReceiver.close(), legalReceiver.close()]);
    }
  });

  it('invalid bodies are 400 VALIDATION_ERROR; there is no update', async () => {
    const bad = [
      { type: 'everyone', callbackUrl: receiver.url },
      { type: 'tenant' },
      { type: 'tenant', callbackUrl: receiver.url, hmacSecret: 'short' },
      { type: 'tenant', callbackUrl: receiver.url, events: ['documentCreated'] },
      { type: 'tenant', callbackUrl: 'ftp://example.test/hook' },
      { type: 'tenant', callbackUrl: 'not a url' },
    ];
    for (const body of bad) {
      const response = await server.api('POST', '/webhooks', { token: admin, body });
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.code, 'VALIDATION_ERROR');
    }
    assert.equal((await server.api('PUT', '/webhooks/some-id', { token: admin, body: {} })).status, 404);
  });

  it('webhook changes are in the audit log, never with the secret', async () => {
    const hook = await createWebhook(server, admin, {
      type: 'tenant',
      callbackUrl: receiver.url,
      hmacSecret: 'audit-secret-value-123',
    });
    await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin });
    const rows = await server.app.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('object_id', '=', hook.id)
      .orderBy('seq')
      .execute();
    assert.deepEqual(
      rows.map((r) => r.activity_type),
      ['webhookCreated', 'webhookDeleted'],
    );
    assert.ok(!JSON.stringify(rows).includes('audit-secret-value-123'));
  });
});

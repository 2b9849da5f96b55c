import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { aDocument } from '../helpers/documents.js';
import { createUser } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { createWebhook, useReceiver, waitFor } from './helpers.js';

/**
 * Issue 37, item 7: "a user granted use_webhooks creates an organization webhook; after the right is
 * removed, the user suspended, then deleted, the webhook keeps receiving every event of the
 * organization". A webhook delivers on the authority of who holds it, only while they could create it
 * now; otherwise it is paused until they are entitled again or an administrator transfers it.
 */
describe('a webhook delivers only while its holder may hold it (paused otherwise, transferred by an administrator)', () => {
  const server = useServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const receiver = useReceiver();
  const ids: Record<string, string> = {};
  const token: Record<string, string> = {};

  before(async () => {
    ids.hooker = await createUser(server, { name: 'hooker', organization: 'Ops', rights: ['use_webhooks'] });
    ids.colleague = await createUser(server, { name: 'colleague', organization: 'Ops' });
    ids.opsAdmin = await createUser(server, {
      name: 'ops-admin',
      organization: 'Ops',
      role: 'organizationAdmin',
    });
    ids.other = await createUser(server, {
      name: 'other-org',
      organization: 'Legal',
      rights: ['use_webhooks'],
    });
    for (const name of ['hooker', 'colleague', 'ops-admin'])
      token[name] = await server.login(name, 'user-password-1');
    token.admin = await server.adminToken();
  });

  /** Whether a document the colleague creates now (a real event of the organization) reaches the receiver. */
  const delivers = async (): Promise<boolean> => {
    const documentId = await aDocument(server, token.colleague!, { pdf: null });
    try {
      await waitFor(() => receiver.received.some((r) => r.json.documentId === documentId), 3000);
      return true;
    } catch {
      return false;
    }
  };
  const stateOf = async (hookId: string) => {
    const list = await server.api('GET', '/webhooks', { token: token.admin });
    return list.body.results.find((w: { id: string }) => w.id === hookId) as {
      state: string;
      creator: string;
      pausedAt: string | null;
    };
  };
  /** The deliveries queued for the webhook. */
  const deliveriesOf = (hookId: string) =>
    server.app.deps.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', '=', hookId)
      .execute();
  const setUser = async (id: string, body: Record<string, unknown>) => {
    const response = await server.api('PUT', `/users/${id}`, { token: token.admin, body });
    assert.equal(response.status, 200, response.text);
  };

  it('losing use_webhooks pauses the webhook (no delivery, state paused, audited); getting it back resumes it', async () => {
    const hook = await createWebhook(server, token.hooker!, {
      type: 'organization',
      callbackUrl: receiver.url,
    });
    assert.equal((await stateOf(hook.id)).state, 'active');
    assert.equal(await delivers(), true, 'it delivers while its holder holds the right');

    await setUser(ids.hooker!, { rights: [] });
    const paused = await stateOf(hook.id);
    assert.equal(paused.state, 'paused');
    assert.ok(paused.pausedAt);
    assert.equal(await delivers(), false, 'nothing is delivered while paused');
    const queued = await deliveriesOf(hook.id);
    const audit = await server.app.deps.db
      .selectFrom('audit_log')
      .select('activity_type')
      .where('object_id', '=', hook.id)
      .execute();
    assert.ok(audit.some((a) => a.activity_type === 'webhookPaused'));

    await setUser(ids.hooker!, { rights: ['use_webhooks'] });
    assert.equal((await stateOf(hook.id)).state, 'active');
    assert.equal(await delivers(), true, 'it delivers again');
    const after = await deliveriesOf(hook.id);
    assert.equal(after.length, queued.length + 1, 'no delivery was queued while it was paused');
    await server.api('DELETE', `/webhooks/${hook.id}`, { token: token.admin });
  });

  it('suspension and deletion of its holder pause it; an organization move does too', async () => {
    const suspended = await createWebhook(server, token.hooker!, {
      type: 'organization',
      callbackUrl: receiver.url,
    });
    await setUser(ids.hooker!, { status: 'suspended' });
    assert.equal((await stateOf(suspended.id)).state, 'paused');
    assert.equal(await delivers(), false);
    await setUser(ids.hooker!, { status: 'active' });
    assert.equal((await stateOf(suspended.id)).state, 'active');

    await setUser(ids.hooker!, { organization: 'Legal' });
    assert.equal((await stateOf(suspended.id)).state, 'paused', 'an Ops webhook held from Legal');
    await setUser(ids.hooker!, { organization: 'Ops' });
    assert.equal((await stateOf(suspended.id)).state, 'active');

    const removed = await server.api('DELETE', `/users/${ids.hooker}`, { token: token.admin });
    assert.equal(removed.status, 200, removed.text);
    assert.equal((await stateOf(suspended.id)).state, 'paused');
    assert.equal(await delivers(), false, 'a deleted user’s webhook receives nothing');

    // Their administrator hands it to someone entitled: it delivers again, on the new holder's authority.
    const refused = await server.api('PUT', `/webhooks/${suspended.id}/owner`, {
      token: token['ops-admin'],
      body: { owner: 'colleague' },
    });
    assert.equal(refused.status, 400, 'the colleague has no use_webhooks');
    const elsewhere = await server.api('PUT', `/webhooks/${suspended.id}/owner`, {
      token: token['ops-admin'],
      body: { owner: 'other-org' },
    });
    assert.equal(elsewhere.status, 400, 'a user of another organization may not hold an Ops webhook');
    const moved = await server.api('PUT', `/webhooks/${suspended.id}/owner`, {
      token: token['ops-admin'],
      body: { owner: 'ops-admin' },
    });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.body.state, 'active');
    assert.equal(moved.body.creator, 'ops-admin');
    assert.equal(await delivers(), true);
  });

  it('only administrators of its scope transfer it: its plain holder gets 403, someone who may not reach it 404', async () => {
    await createUser(server, { name: 'hooker2', organization: 'Ops', rights: ['use_webhooks'] });
    const holder = await server.login('hooker2', 'user-password-1');
    const hook = await createWebhook(server, holder, { type: 'organization', callbackUrl: receiver.url });
    const own = await server.api('PUT', `/webhooks/${hook.id}/owner`, {
      token: holder,
      body: { owner: 'ops-admin' },
    });
    assert.equal(own.status, 403);
    const stranger = await server.api('PUT', `/webhooks/${hook.id}/owner`, {
      token: token.colleague,
      body: { owner: 'ops-admin' },
    });
    assert.equal(stranger.status, 403, 'no use_webhooks at all: 403 before any lookup');
    await createUser(server, { name: 'legal-admin', organization: 'Legal', role: 'organizationAdmin' });
    const legal = await server.login('legal-admin', 'user-password-1');
    const hidden = await server.api('PUT', `/webhooks/${hook.id}/owner`, {
      token: legal,
      body: { owner: 'other-org' },
    });
    assert.equal(hidden.status, 404);
  });
});

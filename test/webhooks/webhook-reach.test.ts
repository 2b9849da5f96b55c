import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { createUser } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { createWebhook, emit, scopeOf, useReceiver, waitFor } from './helpers.js';

/**
 * Issue 20, item 11: "a webhook is changed or deleted only by its creator or an administrator of its
 * scope." A webhook one may not reach is 404 (Contract: "unknown id, or one the caller may not see
 * (never leak existence)"), like an unknown id.
 */
describe('a webhook is changed or deleted only by its creator or an administrator of its scope', () => {
  const server = useServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const receiver = useReceiver();
  const token: Record<string, string> = {};

  before(async () => {
    await createUser(server, { name: 'ann', organization: 'Sales', rights: ['use_webhooks'] });
    await createUser(server, { name: 'ben', organization: 'Sales', rights: ['use_webhooks'] });
    await createUser(server, { name: 'sales-admin', organization: 'Sales', role: 'organizationAdmin' });
    await createUser(server, { name: 'legal-admin', organization: 'Legal', role: 'organizationAdmin' });
    for (const name of ['ann', 'ben', 'sales-admin', 'legal-admin'])
      token[name] = await server.login(name, 'user-password-1');
    token.global = await server.adminToken();
  });

  /** ann's organization webhook with one delivery recorded. */
  const annsWebhook = async () => {
    const hook = await createWebhook(server, token.ann!, { type: 'organization', callbackUrl: receiver.url });
    await emit(server, await scopeOf(server, 'ann'), 'documentCreated', `doc-${hook.id}`);
    await waitFor(async () => {
      const list = await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: token.ann });
      return list.body.total === 1 && list.body.results[0].attempts.length > 0;
    });
    const deliveries = await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: token.ann });
    return { id: hook.id, delivery: deliveries.body.results[0].id as string };
  };
  /** What `who` gets from listing, reading deliveries of, retrying and deleting ann's webhook (delete last). */
  const reach = async (who: string, hook: { id: string; delivery: string }, remove = true) => {
    const list = await server.api('GET', '/webhooks', { token: token[who] });
    const listed = list.body.results.some((w: { id: string }) => w.id === hook.id);
    const deliveries = await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: token[who] });
    const retry = await server.api('POST', `/webhooks/${hook.id}/deliveries/${hook.delivery}/retry`, {
      token: token[who],
    });
    const removed = remove
      ? await server.api('DELETE', `/webhooks/${hook.id}`, { token: token[who] })
      : undefined;
    for (const answer of [deliveries, retry, ...(removed ? [removed] : [])])
      if (answer.status === 404) assert.equal(answer.body.code, 'NOT_FOUND');
    return { listed, deliveries: deliveries.status, retry: retry.status, delete: removed?.status };
  };

  it('another plain user of the organization (holding use_webhooks) does not list, read, retry or delete it: 404', async () => {
    const hook = await annsWebhook();
    assert.deepEqual(await reach('ben', hook), { listed: false, deliveries: 404, retry: 404, delete: 404 });
    const unknown = await server.api('DELETE', '/webhooks/no-such-webhook', { token: token.ben });
    assert.equal(unknown.status, 404, 'the same answer as an unknown id');
    const still = await server.api('GET', '/webhooks', { token: token.ann });
    assert.ok(
      still.body.results.some((w: { id: string }) => w.id === hook.id),
      'still there',
    );
    assert.deepEqual(await reach('ann', hook), { listed: true, deliveries: 200, retry: 200, delete: 200 });
  });

  it('the organization administrator of its scope reaches it; another organization’s administrator does not', async () => {
    const hook = await annsWebhook();
    assert.deepEqual(await reach('legal-admin', hook), {
      listed: false,
      deliveries: 404,
      retry: 404,
      delete: 404,
    });
    assert.deepEqual(await reach('sales-admin', hook), {
      listed: true,
      deliveries: 200,
      retry: 200,
      delete: 200,
    });
  });

  it('a tenant webhook is reached by global administrators only, not by organization administrators', async () => {
    const hook = await createWebhook(server, token.global!, { type: 'tenant', callbackUrl: receiver.url });
    const none = { id: hook.id, delivery: 'no-such-delivery' };
    assert.deepEqual(await reach('sales-admin', none), {
      listed: false,
      deliveries: 404,
      retry: 404,
      delete: 404,
    });
    assert.deepEqual(await reach('global', none), { listed: true, deliveries: 200, retry: 404, delete: 200 });
  });
});

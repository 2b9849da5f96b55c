import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { MAX_REPLAY_EVENTS } from '../../src/webhooks/replay-deliveries.js';
import { aUser } from '../helpers/people.js';
import { auditOf } from '../helpers/audit-log.js';
import { useServer } from '../helpers/use-server.js';
import { createWebhook, emit, scopeOf, sleep, useReceiver, waitFor } from './helpers.js';

// Issue 27, item 3: POST /webhooks/:id/replay sends a time range of events again, in order, with
// their delivery ids, behind what the webhook's lane already holds.
describe('webhook replay (POST /webhooks/:id/replay)', () => {
  const server = useServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  let admin: string;
  const receiver = useReceiver();
  let scope: { tenantId: string; organizationId: string };
  before(async () => {
    admin = await server.adminToken();
    scope = await scopeOf(server, 'admin@example.test');
  });

  const replay = (id: string, body: unknown, token = admin) =>
    server.api('POST', `/webhooks/${id}/replay`, { token, body });
  const documentsReceived = () => receiver.received.map((r) => r.json.documentId);
  const idOf = (documentId: string, nth = 0) =>
    receiver.received.filter((r) => r.json.documentId === documentId)[nth]?.headers['webhook-id'];

  it('sends the range again in order, with the original delivery ids, behind the deliveries waiting in the lane', async () => {
    const start = new Date(Date.now() - 60_000).toISOString();
    await emit(server, scope, 'documentCreated', 'r-before');
    await sleep(5);
    const hook = await createWebhook(server, admin, { type: 'tenant', callbackUrl: receiver.url });
    try {
      for (const doc of ['r-1', 'r-2', 'r-3']) await emit(server, scope, 'documentCreated', doc);
      await waitFor(() => receiver.received.length === 3, 10_000, 'the first three deliveries');
      assert.deepEqual(documentsReceived(), ['r-1', 'r-2', 'r-3']);
      const original = { 'r-1': idOf('r-1'), 'r-2': idOf('r-2'), 'r-3': idOf('r-3') };
      await waitFor(async () => {
        const list = await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: admin });
        return list.body.results.every((d: { status: string }) => d.status === 'delivered');
      });

      // r-2's delivery is gone, as the 30-day purge takes it: its replay is a new delivery.
      const { db } = server.app.deps;
      await db.deleteFrom('webhook_attempts').where('delivery_id', '=', String(original['r-2'])).execute();
      await db.deleteFrom('webhook_deliveries').where('id', '=', String(original['r-2'])).execute();

      // r-4 is being delivered (slowly) and r-5 waits behind it when the replay is asked for.
      receiver.delayMs = 1500;
      await emit(server, scope, 'documentCreated', 'r-4');
      await emit(server, scope, 'documentCreated', 'r-5');
      const replayed = await replay(hook.id, {
        from: start,
        to: new Date(Date.now() + 60_000).toISOString(),
      });
      assert.equal(replayed.status, 200, replayed.text);
      assert.deepEqual(replayed.body, { replayed: 3 }, 'r-4 and r-5 are on their way already: not twice');

      await waitFor(() => receiver.received.length === 8, 20_000, 'r-4, r-5 and the three replayed');
      receiver.delayMs = 0;
      assert.deepEqual(documentsReceived(), ['r-1', 'r-2', 'r-3', 'r-4', 'r-5', 'r-1', 'r-2', 'r-3']);
      assert.equal(idOf('r-1', 1), original['r-1'], 'the same webhook-id: receivers dedupe');
      assert.equal(idOf('r-3', 1), original['r-3']);
      assert.notEqual(idOf('r-2', 1), original['r-2'], 'a purged delivery comes back as a new one');
      assert.ok(!documentsReceived().includes('r-before'), 'nothing from before the webhook existed');

      await waitFor(async () => {
        const list = await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: admin });
        return list.body.results.every((d: { status: string }) => d.status === 'delivered');
      });
      const list = await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: admin });
      assert.equal(list.body.total, 5);
      const r1 = list.body.results.find((d: { id: string }) => d.id === original['r-1']);
      assert.equal(r1.attempts.length, 2, 'a new attempt of the same delivery');

      const audit = await auditOf(server, hook.id, 'webhookReplayed');
      assert.equal(audit.length, 1);

      const beforeCreation = await replay(hook.id, {
        from: new Date(Date.parse(start) - 3_600_000).toISOString(),
        to: start,
      });
      assert.deepEqual(beforeCreation.body, { replayed: 0 });
    } finally {
      await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin });
    }
  });

  it('is bounded: 400 for a bad or too wide range, 413 past the most events, 404 for whoever may not see the webhook', async () => {
    const hook = await createWebhook(server, admin, { type: 'tenant', callbackUrl: receiver.url });
    try {
      const now = Date.now();
      const at = (ms: number) => new Date(now + ms).toISOString();
      for (const body of [
        { from: at(0), to: at(0) },
        { from: at(1000), to: at(0) },
        { from: at(-40 * 86_400_000), to: at(0) },
        { from: 'yesterday', to: at(0) },
        { from: at(0) },
        { from: at(0), to: at(1000), size: 3 },
      ]) {
        const refused = await replay(hook.id, body);
        assert.equal(refused.status, 400, `${JSON.stringify(body)}: ${refused.text}`);
        assert.equal(refused.body.code, 'VALIDATION_ERROR');
      }

      // One event more than a replay sends, a day ahead (after the webhook's creation).
      const day = 86_400_000;
      await server.app.deps.db
        .insertInto('events')
        .values(
          Array.from({ length: MAX_REPLAY_EVENTS + 1 }, (_, i) => ({
            id: randomUUID(),
            tenant_id: scope.tenantId,
            organization_id: scope.organizationId,
            document_id: `bulk-${i}`,
            event: 'documentEdited',
            actor: 'admin@example.test',
            occurred_at: at(day + i),
          })),
        )
        .execute();
      const tooMany = await replay(hook.id, { from: at(day), to: at(2 * day) });
      assert.equal(tooMany.status, 413, tooMany.text);
      assert.equal(tooMany.body.code, 'LIMIT_EXCEEDED');
      const queued = await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: admin });
      assert.equal(queued.body.total, 0, 'nothing was queued');

      const ann = (await aUser(server, { name: 'ann', organization: 'Sales', rights: ['use_webhooks'] }))
        .token;
      const hidden = await replay(hook.id, { from: at(day), to: at(2 * day) }, ann);
      assert.equal(hidden.status, 404);
      assert.equal(hidden.body.code, 'NOT_FOUND');
    } finally {
      await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin });
    }
  });
});

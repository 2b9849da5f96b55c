import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { ManualClock } from '../../src/base/clock.js';
import { writeTransaction } from '../../src/store/db/dialect.js';
import type { Database } from '../../src/store/db/schema.js';
import { EVENT_NAMES, emitEvent } from '../../src/core/events/emit-event.js';
import { ADMIN } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import {
  createWebhook,
  emit,
  scopeOf,
  signatureValid,
  sleep,
  startReceiver,
  waitFor,
  type Receiver,
} from './helpers.js';

describe('Contract: webhook delivery (signed, at-least-once, retried for 24 hours, in order)', () => {
  const clock = new ManualClock(new Date('2026-03-01T08:00:00.000Z'));
  const server = useServer({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  let admin: string;
  let scope: { tenantId: string; organizationId: string };
  before(async () => {
    admin = await server.adminToken();
    scope = await scopeOf(server, ADMIN.name);
  });

  async function deliveries(hookId: string) {
    const response = await server.api('GET', `/webhooks/${hookId}/deliveries`, { token: admin });
    assert.equal(response.status, 200, response.text);
    return response.body.results as {
      id: string;
      event: string;
      documentId: string;
      status: string;
      nextAttemptAt: string | null;
      attempts: {
        attempt: number;
        time: string;
        statusCode: number | null;
        error: string | null;
        success: boolean;
        latencyMs: number;
      }[];
    }[];
  }

  /** Moves the clock to the next retry of `deliveryId` and wakes the worker. */
  async function skipToRetry(hookId: string, deliveryId: string): Promise<boolean> {
    const delivery = (await deliveries(hookId)).find((d) => d.id === deliveryId);
    if (!delivery?.nextAttemptAt || delivery.status !== 'retrying') return false;
    const wait = new Date(delivery.nextAttemptAt).getTime() - clock.now().getTime();
    if (wait > 0) clock.advance(wait);
    server.app.worker?.wake();
    return true;
  }

  async function withReceiver(
    respond: Receiver['respond'],
    test: (receiver: Receiver, hook: { id: string; hmacSecret: string }) => Promise<void>,
  ): Promise<void> {
    const receiver = await startReceiver(respond);
    const hook = await createWebhook(server, admin, { type: 'tenant', callbackUrl: receiver.url });
    try {
      await test(receiver, hook);
    } finally {
      await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin });
      await receiver.close();
    }
  }

  it('every event name is POSTed as JSON {documentId, event, actor, timestamp} with a valid x-signery-signature', async () => {
    await withReceiver(
      () => 200,
      async (receiver, hook) => {
        const at = clock.now().toISOString();
        for (const [i, event] of EVENT_NAMES.entries()) await emit(server, scope, event, `doc-${i}`, 'alice');
        await waitFor(() => receiver.received.length === EVENT_NAMES.length, 10_000, 'all events');
        assert.deepEqual(
          receiver.received.map((r) => r.json.event),
          [...EVENT_NAMES],
          'in event order',
        );
        for (const [i, entry] of receiver.received.entries()) {
          assert.deepEqual(entry.json, {
            documentId: `doc-${i}`,
            event: EVENT_NAMES[i],
            actor: 'alice',
            timestamp: at,
          });
          assert.ok(signatureValid(entry, hook.hmacSecret), 'HMAC-SHA256 of the raw body with hmacSecret');
          assert.equal(entry.headers['content-type'], 'application/json');
          assert.match(String(entry.headers['x-signery-delivery']), /^[0-9a-f-]{36}$/);
          assert.equal(entry.headers['x-signery-timestamp'], at);
          assert.ok(!signatureValid(entry, 'some-other-secret'));
        }
        await waitFor(
          async () => (await deliveries(hook.id)).every((d) => d.status === 'delivered'),
          10_000,
          'recorded',
        );
        const list = await deliveries(hook.id);
        assert.equal(list.length, EVENT_NAMES.length);
        assert.ok(
          list.every(
            (d) => d.status === 'delivered' && d.attempts.length === 1 && d.attempts[0]?.statusCode === 200,
          ),
        );
      },
    );
  });

  it('a receiver failing three times then succeeding gets the event four times with the same delivery id; the first retry comes within 30 s, later ones wait longer', async () => {
    await withReceiver(
      (_request, index) => (index < 3 ? 500 : 204),
      async (receiver, hook) => {
        const start = clock.now().getTime();
        const [deliveryId] = await emit(server, scope, 'documentSigned', 'doc-retry');
        assert.ok(deliveryId);
        const gaps: number[] = [];
        for (let attempt = 1; attempt <= 3; attempt++) {
          await waitFor(() => receiver.received.length === attempt, 10_000, `attempt ${attempt}`);
          await waitFor(
            async () => (await deliveries(hook.id))[0]?.status === 'retrying',
            10_000,
            'retry scheduled',
          );
          const before = clock.now().getTime();
          assert.ok(await skipToRetry(hook.id, deliveryId));
          gaps.push(clock.now().getTime() - before);
        }
        await waitFor(() => receiver.received.length === 4, 10_000, 'the fourth attempt');
        await waitFor(
          async () => (await deliveries(hook.id))[0]?.status === 'delivered',
          10_000,
          'delivered',
        );
        assert.deepEqual(
          receiver.received.map((r) => r.headers['x-signery-delivery']),
          [deliveryId, deliveryId, deliveryId, deliveryId],
        );
        assert.ok(
          receiver.received.every((r) => r.body === receiver.received[0]?.body),
          'the same body each time',
        );
        assert.ok(gaps[0]! <= 30_000, `first retry within 30 s, was ${gaps[0]} ms`);
        assert.ok(gaps[1]! > gaps[0]! / 2 && gaps[2]! >= 40_000, `growing intervals: ${gaps.join(', ')}`);
        const [delivery] = await deliveries(hook.id);
        assert.deepEqual(
          delivery?.attempts.map((a) => [a.attempt, a.statusCode, a.success]),
          [
            [1, 500, false],
            [2, 500, false],
            [3, 500, false],
            [4, 204, true],
          ],
        );
        assert.equal(delivery?.attempts[0]?.time, new Date(start).toISOString());
        assert.match(String(delivery?.attempts[0]?.error), /500/);
        assert.ok(delivery?.attempts.every((a) => Number.isInteger(a.latencyMs) && a.latencyMs >= 0));
        assert.deepEqual(
          receiver.received.map((r) => r.headers['x-signery-timestamp']),
          delivery?.attempts.map((a) => a.time),
          'x-signery-timestamp is each attempt’s time',
        );
      },
    );
  });

  it('events to one webhook arrive in order even when the first attempt of an earlier one failed', async () => {
    let failedOnce = false;
    await withReceiver(
      (request) => {
        if (request.json.documentId === 'doc-a' && !failedOnce) {
          failedOnce = true;
          return 503;
        }
        return 200;
      },
      async (receiver, hook) => {
        const [a] = await emit(server, scope, 'documentCreated', 'doc-a');
        await emit(server, scope, 'documentCreated', 'doc-b');
        await emit(server, scope, 'documentCreated', 'doc-c');
        await waitFor(() => receiver.received.length === 1, 10_000, 'the first attempt');
        server.app.worker?.wake();
        await sleep(300);
        assert.equal(receiver.received.length, 1, 'later events wait while the earlier one is retrying');
        const statuses = (await deliveries(hook.id)).map((d) => [d.documentId, d.status]);
        assert.deepEqual(statuses, [
          ['doc-c', 'waiting'],
          ['doc-b', 'waiting'],
          ['doc-a', 'retrying'],
        ]);
        assert.ok(await skipToRetry(hook.id, a!));
        await waitFor(() => receiver.received.length === 4, 10_000, 'the rest');
        assert.deepEqual(
          receiver.received.map((r) => [r.json.documentId, r.status]),
          [
            ['doc-a', 503],
            ['doc-a', 200],
            ['doc-b', 200],
            ['doc-c', 200],
          ],
        );
      },
    );
  });

  it('a backlog behind a slow answer goes out in order, each delivery once, every attempt in the delivery log', async () => {
    await withReceiver(
      () => 200,
      async (receiver, hook) => {
        // The first answer is held while seven more events queue up behind it: the worker then sends
        // them one after the other, ahead of their records (lanes run ahead), which follow in batches.
        receiver.delayMs = 300;
        await emit(server, scope, 'documentCreated', 'backlog-1');
        await waitFor(() => receiver.received.length === 1, 10_000, 'the first request');
        for (let n = 2; n <= 8; n++) await emit(server, scope, 'documentCreated', `backlog-${n}`);
        receiver.delayMs = 0;
        await waitFor(() => receiver.received.length === 8, 10_000, 'the backlog');
        const sent = receiver.received.map((r) => r.json.documentId);
        assert.deepEqual(
          sent,
          Array.from({ length: 8 }, (_, index) => `backlog-${String(index + 1)}`),
          'in event order',
        );
        assert.equal(new Set(receiver.received.map((r) => r.headers['x-signery-delivery'])).size, 8);
        await waitFor(
          async () => (await deliveries(hook.id)).every((d) => d.status === 'delivered'),
          10_000,
          'recorded',
        );
        const list = await deliveries(hook.id);
        assert.equal(list.length, 8);
        for (const delivery of list) {
          assert.equal(delivery.attempts.length, 1, delivery.documentId);
          const [attempt] = delivery.attempts;
          assert.deepEqual(
            [attempt?.attempt, attempt?.statusCode, attempt?.success, attempt?.error],
            [1, 200, true, null],
            delivery.documentId,
          );
          assert.ok(Number.isInteger(attempt?.latencyMs) && (attempt?.latencyMs ?? -1) >= 0);
        }
        await sleep(200);
        assert.equal(receiver.received.length, 8, 'nothing sent twice');
      },
    );
  });

  // writeTransaction (every use case) sends the event's statement with the COMMIT on PostgreSQL; a
  // transaction begun any other way runs it at once.
  const begins = {
    writeTransaction: <T>(work: (trx: Kysely<Database>) => Promise<T>) =>
      writeTransaction(server.app.deps.db, server.app.deps.dialect, work),
    'db.transaction()': <T>(work: (trx: Kysely<Database>) => Promise<T>) =>
      server.app.deps.db.transaction().execute(work),
  };
  for (const [begun, inTransaction] of Object.entries(begins)) {
    it(`an event whose change rolls back is never sent, and leaves its webhook’s lane as it was (${begun})`, async () => {
      await withReceiver(
        () => 200,
        async (receiver, hook) => {
          const at = server.app.deps.clock.now();
          const undoneId = `doc-undone-${begun}`;
          const afterId = `doc-after-${begun}`;
          await assert.rejects(
            inTransaction(async (trx) => {
              await emitEvent(trx, {
                ...scope,
                documentId: undoneId,
                event: 'documentEdited',
                actor: 'a',
                at,
              });
              throw new Error('the change failed after its event');
            }),
            /the change failed after its event/,
          );
          // Had the rolled-back event taken a place in the lane, this one would wait behind it for good.
          await emit(server, scope, 'documentEdited', afterId);
          await waitFor(
            () => receiver.received.some((r) => r.json.documentId === afterId),
            10_000,
            'the committed event',
          );
          server.app.worker?.wake();
          await sleep(300);
          assert.deepEqual(
            receiver.received.map((r) => r.json.documentId),
            [afterId],
          );
          assert.deepEqual(
            (await deliveries(hook.id)).map((d) => d.documentId),
            [afterId],
          );
          const undone = await server.app.deps.db
            .selectFrom('events')
            .select('id')
            .where('document_id', '=', undoneId)
            .execute();
          assert.deepEqual(undone, [], 'no event row either');
        },
      );
    });
  }

  it('a delivery still failing 24 hours after its event is dead-lettered; the next one then goes out (skip ahead); a manual retry sends it again', async () => {
    let healthy = false;
    await withReceiver(
      (request) => (request.json.documentId === 'doc-dead' && !healthy ? 503 : 200),
      async (receiver, hook) => {
        const eventTime = clock.now().getTime();
        const [dead] = await emit(server, scope, 'signRequest', 'doc-dead');
        await emit(server, scope, 'signRequest', 'doc-next');
        let attempts = 0;
        for (;;) {
          await waitFor(() => receiver.received.length > attempts, 10_000, `attempt ${attempts + 1}`);
          attempts = receiver.received.length;
          await waitFor(
            async () =>
              ['retrying', 'failed'].includes(
                (await deliveries(hook.id)).find((d) => d.id === dead)?.status ?? '',
              ),
            10_000,
            'the attempt recorded',
          );
          if (!(await skipToRetry(hook.id, dead!))) break;
          assert.ok(attempts < 60, 'retries stop');
        }
        const list = await deliveries(hook.id);
        const failed = list.find((d) => d.id === dead);
        assert.equal(failed?.status, 'failed');
        assert.equal(failed?.nextAttemptAt, null);
        assert.equal(
          failed?.attempts.length,
          receiver.received.filter((r) => r.json.documentId === 'doc-dead').length,
          'every attempt recorded',
        );
        assert.ok(
          failed.attempts.length >= 8,
          `retried with growing intervals (${failed.attempts.length} attempts)`,
        );
        assert.equal(
          failed?.attempts.at(-1)?.time,
          new Date(eventTime + 24 * 3_600_000).toISOString(),
          'the last attempt is at the end of the 24 hours',
        );
        await waitFor(
          () => receiver.received.some((r) => r.json.documentId === 'doc-next'),
          10_000,
          'skip ahead',
        );
        const tried = receiver.received.filter((r) => r.json.documentId === 'doc-dead').length;
        clock.advance(3 * 3_600_000);
        server.app.worker?.wake();
        await sleep(200);
        assert.equal(
          receiver.received.filter((r) => r.json.documentId === 'doc-dead').length,
          tried,
          'no attempt after dead-lettering',
        );

        healthy = true;
        const retry = await server.api('POST', `/webhooks/${hook.id}/deliveries/${dead}/retry`, {
          token: admin,
        });
        assert.deepEqual(retry.body, { status: 'SUCCESS' });
        await waitFor(
          () => receiver.received.filter((r) => r.json.documentId === 'doc-dead').length === tried + 1,
          10_000,
          'manual retry',
        );
        assert.equal(receiver.received.at(-1)?.headers['x-signery-delivery'], dead, 'the same delivery id');
        await waitFor(
          async () => (await deliveries(hook.id)).find((d) => d.id === dead)?.status === 'delivered',
          10_000,
          'delivered',
        );
        const other = await server.api('POST', `/webhooks/${hook.id}/deliveries/not-a-delivery/retry`, {
          token: admin,
        });
        assert.equal(other.status, 404);
      },
    );
  });

  it('a deleted webhook gets nothing more, and its pending deliveries go with it', async () => {
    const receiver = await startReceiver(() => 500);
    try {
      const hook = await createWebhook(server, admin, { type: 'tenant', callbackUrl: receiver.url });
      await emit(server, scope, 'documentDeleted', 'doc-gone');
      await emit(server, scope, 'documentDeleted', 'doc-gone-2');
      await waitFor(() => receiver.received.length === 1, 10_000, 'first attempt');
      assert.equal((await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin })).status, 200);
      clock.advance(3_600_000);
      server.app.worker?.wake();
      await sleep(300);
      assert.equal(receiver.received.length, 1);
      const left = await server.app.deps.db
        .selectFrom('jobs')
        .select('id')
        .where('ordering_key', '=', `webhook:${hook.id}`)
        .execute();
      assert.equal(left.length, 0);
    } finally {
      await receiver.close();
    }
  });
});

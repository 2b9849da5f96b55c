import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ADMIN } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { createWebhook, emit, scopeOf, sleep, startReceiver, waitFor } from './helpers.js';

// The worker renews a claim every third of its lease; a short lease makes a backlog outlast many
// leases in a few seconds, as a receiver answering in 1.5 s does with 15 s leases.
const LEASE_MS = 900;
const ANSWER_MS = 250;
const EVENTS = 12;

describe('Contract: deliveries to one webhook go one at a time and in order, whatever the receiver’s speed', () => {
  const server = useServer({
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    worker: { leaseMs: LEASE_MS, pollIntervalMs: 50 },
  });
  let admin: string;
  let scope: { tenantId: string; organizationId: string };
  before(async () => {
    admin = await server.adminToken();
    scope = await scopeOf(server, ADMIN.name);
  });

  it('a backlog that takes many leases to send goes out once each, in order, never two at a time (the claim is renewed for the whole run of the lane)', async () => {
    const receiver = await startReceiver(() => 200);
    const arrivals: number[] = [];
    const respond = receiver.respond;
    receiver.respond = (request, index) => {
      arrivals.push(performance.now());
      return respond(request, index);
    };
    receiver.delayMs = ANSWER_MS;
    const hook = await createWebhook(server, admin, { type: 'tenant', callbackUrl: receiver.url });
    try {
      for (let n = 1; n <= EVENTS; n++) await emit(server, scope, 'documentCreated', `slow-${String(n)}`);
      // EVENTS × ANSWER_MS is more than three leases.
      await waitFor(() => receiver.received.length >= EVENTS, 30_000, 'the backlog');
      // Long enough for an expired claim to be swept and sent again.
      await sleep(2 * LEASE_MS);
      assert.deepEqual(
        receiver.received.map((r) => r.json.documentId),
        Array.from({ length: EVENTS }, (_, index) => `slow-${String(index + 1)}`),
        'each event once, in event order',
      );
      // A request that arrives before the one before it was answered overlapped it.
      for (let i = 1; i < arrivals.length; i++)
        assert.ok(
          arrivals[i]! >= arrivals[i - 1]! + ANSWER_MS - 5,
          `request ${String(i)} overlapped the one before`,
        );
      const list = await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: admin });
      await waitFor(
        async () =>
          (
            (await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: admin })).body.results as {
              status: string;
            }[]
          ).every((d) => d.status === 'delivered'),
        10_000,
        'recorded',
      );
      assert.equal(list.status, 200);
      for (const delivery of (await server.api('GET', `/webhooks/${hook.id}/deliveries`, { token: admin }))
        .body.results as { documentId: string; attempts: unknown[] }[])
        assert.equal(delivery.attempts.length, 1, `${delivery.documentId} has one attempt recorded`);
    } finally {
      await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin });
      await receiver.close();
    }
  });
});

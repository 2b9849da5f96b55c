import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeStore, type TestStore } from '../helpers/server.js';
import { loadConfig } from '../../src/base/config.js';
import { openDatabase } from '../../src/store/db/open-database.js';
import {
  deliveryIdOf,
  inFlightAtCrash,
  startReceiver,
  timesReceived,
  waitFor,
  type Receiver,
} from './helpers.js';
import {
  createTenantWebhook,
  logIn,
  runScript,
  serverEnv,
  spawnServer,
  type ServerProcess,
} from './processes.js';

const EVENTS = 30;

describe('Contract: delivery is at-least-once — a server killed mid-delivery delivers everything after restart', () => {
  // Removed after the servers that use it stop.
  let store: TestStore;
  let env: Record<string, string>;
  let receiver: Receiver;
  const servers: ServerProcess[] = [];
  before(async () => {
    store = await makeStore('crash');
    env = serverEnv(store.env);
    receiver = await startReceiver();
    receiver.delayMs = 80;
  });
  after(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    await receiver.close();
    await store?.remove();
  });

  it('SIGKILL during deliveries: after a restart every event arrives, in event order, a redelivery keeping its delivery id; only deliveries in flight at the crash arrive twice', async (t) => {
    const first = await spawnServer(env);
    servers.push(first);
    const token = await logIn(first.url);
    await createTenantWebhook(first.url, token, receiver.url);
    // Emitted by another process while the server delivers (the server never sees the calls).
    await runScript('test/webhooks/emit-events.ts', [String(EVENTS), 'crash'], env);
    await waitFor(() => receiver.received.length >= 5, 20_000, 'some deliveries');
    await first.stop('SIGKILL');
    const database = await openDatabase(loadConfig(env));
    const inFlight = await inFlightAtCrash(database.db, receiver).finally(() => database.close());
    const beforeRestart = receiver.received.length;
    assert.ok(beforeRestart < EVENTS, 'killed in the middle');

    const second = await spawnServer(env);
    servers.push(second);
    // The job the killed process held comes back when its lease (15 s) expires.
    await waitFor(
      () => new Set(receiver.received.map((r) => r.json.documentId)).size === EVENTS,
      60_000,
      'every event',
    );
    const firstSeen: string[] = [];
    const deliveryOf = new Map<string, string>();
    for (const entry of receiver.received) {
      const id = entry.json.documentId;
      const delivery = deliveryIdOf(entry);
      if (!deliveryOf.has(id)) {
        firstSeen.push(id);
        deliveryOf.set(id, delivery);
      } else {
        assert.equal(deliveryOf.get(id), delivery, 'a redelivery carries the same delivery id');
      }
    }
    assert.deepEqual(
      firstSeen,
      Array.from({ length: EVENTS }, (_, i) => `crash-${i}`),
      'in event order',
    );
    const twice = [...timesReceived(receiver)].filter(([, times]) => times > 1).map(([id]) => id);
    assert.deepEqual(
      twice.filter((id) => !inFlight.has(id)),
      [],
      'a delivery recorded before the crash is not sent again',
    );
    t.diagnostic(`delivered twice: ${twice.length}; in flight at the SIGKILL: ${inFlight.size}`);
    await second.stop('SIGTERM');
  });
});

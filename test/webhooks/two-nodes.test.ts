import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DatabaseHandle } from '../../src/store/db/dialect.js';
import { writeTransaction } from '../../src/store/db/dialect.js';
import { openPostgres } from '../../src/store/db/postgres/postgres-database.js';
import type { Database } from '../../src/store/db/schema.js';
import { emitEvent } from '../../src/core/events/emit-event.js';
import { ADMIN, TEST_DATABASE_URL } from '../helpers/server.js';
import { sleep, startReceiver, waitFor, type Receiver } from './helpers.js';
import {
  createTenantWebhook,
  logIn,
  serverEnv,
  spawnServer,
  tearDownNodes,
  type ServerProcess,
} from './processes.js';

const EVENTS = 60;
const BURST = 4;
const WEBHOOKS = 4;

describe(
  'several nodes on one PostgreSQL deliver each event exactly once to a healthy receiver (DESIGN: Storage, background work)',
  { skip: TEST_DATABASE_URL ? false : 'SQLite is one process’s file: several nodes need PostgreSQL' },
  () => {
    const schema = `t_nodes_${randomBytes(4).toString('hex')}`;
    let dataDirs: string[] = [];
    let receiver: Receiver;
    let database: DatabaseHandle<Database>;
    const servers: ServerProcess[] = [];
    before(async () => {
      receiver = await startReceiver();
      dataDirs = [
        await mkdtemp(join(tmpdir(), 'signery-node-a-')),
        await mkdtemp(join(tmpdir(), 'signery-node-b-')),
      ];
    });
    after(() =>
      tearDownNodes({
        nodes: servers,
        closers: [database, receiver],
        dataDirs,
        databaseUrl: TEST_DATABASE_URL ?? '',
        schema,
      }),
    );

    it('two server processes with the same DATABASE_URL and DATABASE_SCHEMA share the work without double delivery', async () => {
      const url = TEST_DATABASE_URL ?? '';
      for (const dir of dataDirs) {
        servers.push(
          await spawnServer(serverEnv({ DATA_DIR: dir, DATABASE_URL: url, DATABASE_SCHEMA: schema })),
        );
      }
      const token = await logIn(servers[0]!.url);
      const hooks: string[] = [];
      for (let i = 0; i < WEBHOOKS; i++)
        hooks.push(await createTenantWebhook(servers[1]!.url, token, `${receiver.url}?w=${i}`));

      database = await openPostgres({ url, schema });
      const admin = await database.db
        .selectFrom('users')
        .select(['tenant_id', 'organization_id'])
        .where('name', '=', ADMIN.name)
        .executeTakeFirstOrThrow();
      // In waves: a node that takes a webhook's head keeps its queue while it is not empty (the
      // hand-off), so each wave's heads go to whichever node polls first — over the waves, both.
      for (let wave = 0; wave < EVENTS / BURST; wave++) {
        for (let i = wave * BURST; i < (wave + 1) * BURST; i++) {
          await writeTransaction(database.db, database.dialect, (trx) =>
            emitEvent(trx, {
              tenantId: admin.tenant_id,
              organizationId: admin.organization_id,
              documentId: `node-${i}`,
              event: 'documentEdited',
              actor: ADMIN.name,
              at: new Date(),
            }),
          );
        }
        const expected = (wave + 1) * BURST * WEBHOOKS;
        await waitFor(() => receiver.received.length >= expected, 30_000, `wave ${wave}`);
      }
      await waitFor(() => receiver.received.length >= EVENTS * WEBHOOKS, 60_000, 'every delivery');
      await sleep(1_000);
      assert.equal(receiver.received.length, EVENTS * WEBHOOKS, 'nothing delivered twice');
      const deliveryIds = receiver.received.map((r) => String(r.headers['x-signery-delivery']));
      assert.equal(new Set(deliveryIds).size, deliveryIds.length);

      const workers = await database.db
        .selectFrom('jobs')
        .select('locked_by')
        .distinct()
        .where('type', '=', 'webhook.deliver')
        .where('status', '=', 'done')
        .execute();
      // Which node delivers is a matter of timing (a webhook's lane stays with the node that holds its
      // head), so both taking part is not asserted; exactly-once delivery above is the property.
      assert.ok(workers.length >= 1 && workers.length <= 2);
      const perWebhook = new Map<string, string[]>(hooks.map((hook) => [hook, []]));
      const deliveries = await database.db
        .selectFrom('webhook_deliveries')
        .select(['id', 'webhook_id'])
        .execute();
      const webhookOf = new Map(deliveries.map((d) => [d.id, d.webhook_id]));
      for (const entry of receiver.received) {
        perWebhook
          .get(webhookOf.get(String(entry.headers['x-signery-delivery'])) ?? '')
          ?.push(entry.json.documentId);
      }
      for (const [hook, documents] of perWebhook) {
        assert.deepEqual(
          documents,
          Array.from({ length: EVENTS }, (_, i) => `node-${i}`),
          `webhook ${hook} got its events in order`,
        );
      }
    });
  },
);

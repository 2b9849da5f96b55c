/**
 * Test-only: emits events into the database of a running server, from another process, the way a
 * document change does. `node --import tsx test/webhooks/emit-events.ts <count> <documentIdPrefix>`
 * with the server's DATA_DIR or DATABASE_URL + DATABASE_SCHEMA and ADMIN_EMAIL in the environment.
 */
import { loadConfig } from '../../src/base/config.js';
import { writeTransaction } from '../../src/store/db/dialect.js';
import { openDatabase } from '../../src/store/db/open-database.js';
import { emitEvent } from '../../src/core/events/emit-event.js';

const [countText = '10', prefix = 'doc'] = process.argv.slice(2);
const config = loadConfig();
const database = await openDatabase(config);
try {
  const admin = await database.db
    .selectFrom('users')
    .select(['tenant_id', 'organization_id', 'name'])
    .where('name', '=', config.admin.email ?? '')
    .executeTakeFirstOrThrow();
  for (let i = 0; i < Number(countText); i++) {
    // One transaction per event, as one document change each; BEGIN IMMEDIATE on SQLite because
    // the server's process writes to the same file meanwhile.
    await writeTransaction(database.db, database.dialect, (trx) =>
      emitEvent(trx, {
        tenantId: admin.tenant_id,
        organizationId: admin.organization_id,
        documentId: `${prefix}-${i}`,
        event: 'documentCreated',
        actor: admin.name,
        at: new Date(),
      }),
    );
  }
  console.log(`emitted ${countText}`);
} finally {
  await database.close();
}

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { migrateToLatest } from '../../src/store/db/migrate.js';
import { openPostgres } from '../../src/store/db/postgres/postgres-database.js';
import { TEST_DATABASE_URL } from '../helpers/server.js';

// PostgreSQL only: on SQLite there is no other schema to race with. The SQLite run of the suite
// reports this file as skipped with this reason.
const skip = TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (runs in the PostgreSQL pass of CI)';

describe('migrations on a PostgreSQL server shared with other instances', { skip }, () => {
  const url = TEST_DATABASE_URL ?? '';
  const ours = `t_mig_${randomBytes(5).toString('hex')}`;
  const theirs = `t_other_${randomBytes(5).toString('hex')}`;
  let admin: pg.Client;
  before(async () => {
    admin = new pg.Client({ connectionString: url });
    await admin.connect();
  });
  after(async () => {
    await admin.query(`drop schema if exists "${ours}" cascade`);
    await admin.query(`drop schema if exists "${theirs}" cascade`);
    await admin.end();
  });

  it('nodes starting together on a new schema all open it (CREATE SCHEMA IF NOT EXISTS races)', async () => {
    for (let round = 0; round < 5; round++) {
      const fresh = `t_race_${randomBytes(5).toString('hex')}`;
      try {
        const handles = await Promise.all(
          Array.from({ length: 4 }, () => openPostgres({ url, schema: fresh })),
        );
        await Promise.all(handles.map((handle) => handle.close()));
      } finally {
        await admin.query(`drop schema if exists "${fresh}" cascade`);
      }
    }
  });

  it("introspection sees only the instance's own schema", async () => {
    await admin.query(`create schema "${theirs}"`);
    await admin.query(`create table "${theirs}".kysely_migration (name text primary key, x serial)`);
    const handle = await openPostgres({ url, schema: ours });
    try {
      const tables = await handle.db.introspection.getTables({ withInternalKyselyTables: true });
      assert.deepEqual(
        tables.filter((t) => t.schema !== ours),
        [],
      );
      assert.deepEqual(await handle.db.introspection.getSchemas(), [{ name: ours }]);
      await migrateToLatest(handle);
      const after = await handle.db.introspection.getTables({ withInternalKyselyTables: true });
      const migrationTable = after.find((t) => t.name === 'kysely_migration');
      assert.ok(migrationTable, 'our migration table is listed');
      assert.ok(after.some((t) => t.name === 'users'));
      const audit = after.find((t) => t.name === 'audit_log');
      assert.ok(
        audit?.columns.some((c) => c.name === 'seq' && c.isAutoIncrementing) ?? false,
        'serial columns are recognised',
      );
      assert.equal(
        (await handle.db.introspection.getTables()).some((t) => t.name === 'kysely_migration'),
        false,
        "Kysely's own tables are left out unless asked for",
      );
    } finally {
      await handle.close();
    }
  });

  it('another instance altering its tables all the while never fails our migrations', async () => {
    let churning = true;
    const churn = (async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        // The failure seen in CI: a column dropped between two catalog reads of Kysely's own
        // introspector ("column created_at of relation definitions does not exist").
        await client.query(`create schema "${theirs}_churn"`);
        await client.query(`create table "${theirs}_churn".definitions (id bigserial primary key)`);
        while (churning) {
          await client.query(`alter table "${theirs}_churn".definitions add column created_at bigserial`);
          await client.query(`alter table "${theirs}_churn".definitions drop column created_at`);
        }
        await client.query(`drop schema "${theirs}_churn" cascade`);
      } finally {
        await client.end();
      }
    })();
    try {
      for (let round = 0; round < 8; round++) {
        const handle = await openPostgres({ url, schema: `${ours}_${round}` });
        try {
          await migrateToLatest(handle);
        } finally {
          await handle.close();
          await admin.query(`drop schema if exists "${ours}_${round}" cascade`);
        }
      }
    } finally {
      churning = false;
      await churn;
    }
  });
});

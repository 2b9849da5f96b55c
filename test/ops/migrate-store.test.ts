import { COPIED } from '../../src/ops/migrate-store/migrate-store.js';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { countAllRows } from '../../src/ops/inventory.js';
import { openPostgres } from '../../src/store/db/postgres/postgres-database.js';
import { openSqliteSnapshot } from '../../src/store/db/sqlite/read-snapshot.js';
import { workspace, type Workspace } from '../pdf/oracles.js';
import { startS3rver, type RunningS3 } from '../helpers/s3rver.js';
import { startServer, TEST_DATABASE_URL, type TestServer } from '../helpers/server.js';

/** The tables copied row by row: every table of the schema but the development CA's. */
const TABLES = COPIED.length;
import {
  anInstallation,
  assertSameInstallation,
  finished,
  runSignery,
  signery,
  type Installation,
} from './installation.js';

/** The PostgreSQL server of every CI machine; the target of the migration whatever the pass. */
const POSTGRES = process.env.MIGRATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

describe(
  'signery migrate-store copies an embedded installation to PostgreSQL and S3, verified, resumable (Operations: outgrow one machine)',
  {
    skip: TEST_DATABASE_URL
      ? 'its source is an SQLite installation and its target PostgreSQL whatever the pass: it runs once, in the SQLite pass'
      : false,
  },
  () => {
    let s3: RunningS3;
    let source: TestServer;
    let installation: Installation;
    let space: Workspace;
    const target = `t_ms_${randomBytes(4).toString('hex')}`;
    const foreign = `t_ms_foreign_${randomBytes(4).toString('hex')}`;
    // The bucket's endpoint and keys as the nodes will get them; the bucket itself is named by --blobs.
    const s3Env = () => {
      const { S3_BUCKET: _bucket, ...rest } = s3.env;
      return rest;
    };
    const migrate = (extra: string[] = []) => [
      'migrate-store',
      '--to',
      POSTGRES,
      '--schema',
      target,
      '--blobs',
      `s3://${s3.bucket}/signery`,
      ...extra,
    ];

    before(async () => {
      s3 = await startS3rver();
      space = await workspace();
      source = await startServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
      installation = await anInstallation(source);
    });
    after(async () => {
      // The source's server was stopped by a test; its data directory is removed here.
      await source?.app.close().catch(() => undefined);
      if (source) await rm(source.dataDir, { recursive: true, force: true });
      await s3?.close();
      await space?.remove();
      const client = new pg.Client({ connectionString: POSTGRES });
      await client.connect();
      for (const schema of [target, foreign]) await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    });

    it('refuses a target that holds data it did not put there, and changes nothing', async () => {
      const other = await startServer({ env: { DATABASE_URL: POSTGRES, DATABASE_SCHEMA: foreign } });
      await other.close();
      const refused = await runSignery(['migrate-store', '--to', POSTGRES, '--schema', foreign], {
        DATA_DIR: source.dataDir,
      });
      assert.equal(refused.status, 1, refused.stderr);
      assert.match(
        refused.stderr,
        new RegExp(`The schema "${foreign}" already holds data .*nothing was changed`),
      );
      const db = await openPostgres({ url: POSTGRES, schema: foreign });
      try {
        const tables = (await db.db.introspection.getTables()).map((t) => t.name);
        assert.ok(!tables.includes('signery_store_migration'), 'no trace of the refused run');
        assert.equal((await countAllRows(db.db)).documents, 0);
      } finally {
        await db.close();
      }
    });

    it('a run killed mid-copy (SIGKILL) while the source serves, run again once it stopped: complete, verified, no row twice; a server on the copy shows the same installation', async () => {
      // One row per batch: the copy takes long enough to be killed in the middle of it.
      const child = signery(migrate(['--batch-size', '1']), { DATA_DIR: source.dataDir, ...s3Env() });
      const killed = await finished(child, (line) => {
        if (/^rows users: /.test(line)) child.kill('SIGKILL');
      });
      assert.equal(killed.signal, 'SIGKILL', `the first run was killed mid-copy:\n${killed.stderr}`);
      assert.doesNotMatch(killed.stdout, /VERIFIED/);

      // The way over: stop the source, then run again.
      await source.app.close();
      const resumed = await runSignery(migrate(), { DATA_DIR: source.dataDir, ...s3Env() });
      assert.equal(resumed.status, 0, resumed.stderr);
      assert.match(resumed.stderr, /target: resuming the migration begun/);
      assert.match(
        resumed.stderr,
        new RegExp(`rows: [\\d,]+ in ${TABLES} tables, [\\d,]+ written, [1-9][\\d,]* already there`),
      );
      assert.match(resumed.stderr, /development CA: carried into the database/);
      assert.match(
        resumed.stdout,
        new RegExp(`^VERIFIED: [\\d,]+ rows in ${TABLES} tables, [1-9]\\d* blobs`),
      );

      // Every table has exactly the source's rows: what the killed run wrote was not written twice.
      const snapshot = openSqliteSnapshot(join(source.dataDir, 'signery.db'));
      const copy = await openPostgres({ url: POSTGRES, schema: target });
      try {
        // On SQLite the development CA is files under DATA_DIR/pki; on PostgreSQL a row.
        assert.deepEqual(await countAllRows(copy.db), { ...(await countAllRows(snapshot.db)), dev_pki: 1 });
      } finally {
        await snapshot.close();
        await copy.close();
      }

      // Once more on the complete copy: nothing to write, nothing to copy.
      const again = await runSignery(migrate(), { DATA_DIR: source.dataDir, ...s3Env() });
      assert.equal(again.status, 0, again.stderr);
      assert.match(again.stderr, new RegExp(`rows: [\\d,]+ in ${TABLES} tables, 0 written`));
      assert.match(again.stderr, /blobs: ([\d,]+) of \1, 0 copied \(0\.0 MB\), \1 already there/);

      // Nodes on the copy: its database, its bucket, and a data directory of their own (no dev CA
      // there: it must come from the database).
      const node = await startServer({
        env: {
          DATABASE_URL: POSTGRES,
          DATABASE_SCHEMA: target,
          ...s3.env,
          S3_PREFIX: 'signery',
          WEBHOOK_ALLOW_PRIVATE: 'true',
        },
      });
      try {
        await assertSameInstallation(node, installation, space);
      } finally {
        await node.close();
      }

      // The node wrote audit records the source does not have: a further run would erase them.
      const refused = await runSignery(migrate(), { DATA_DIR: source.dataDir, ...s3Env() });
      assert.equal(refused.status, 1, refused.stderr);
      assert.match(refused.stderr, /The target holds audit records the source does not have/);
    });
  },
);

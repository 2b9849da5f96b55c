import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyAuditChain } from '../../audit/verify-chain.js';
import { loadConfig, type S3Config } from '../../base/config.js';
import type { BlobStore } from '../../store/blobs/blob-store.js';
import { openBlobStore } from '../../store/blobs/open-blob-store.js';
import { S3BlobStore } from '../../store/blobs/s3.js';
import type { DatabaseHandle } from '../../store/db/dialect.js';
import { migrateToLatest, pendingMigrations } from '../../store/db/migrate.js';
import { openPostgres } from '../../store/db/postgres/postgres-database.js';
import { advanceSerialSequences } from '../../store/db/postgres/serial-sequences.js';
import type { Database } from '../../store/db/schema.js';
import { openSqliteSnapshot } from '../../store/db/sqlite/read-snapshot.js';
import { DevPkiStore } from '../../store/dev-pki-store.js';
import { countAllRows, countReferencedBlobs } from '../inventory.js';
import { OperationFailed } from '../operation-failed.js';
import { megabytes, seconds, thousands, type Progress } from '../progress.js';
import { columnKind, countRows, type Columns } from '../rows.js';
import { TABLE_ORDER, type TableName } from '../tables.js';
import { carryDevCa, refuseOtherDevCa, sameDevCa, sourceDevCa } from './carry-dev-ca.js';
import { copyBlobs, verifyBlobs } from './copy-blobs.js';
import { copyTable, pruneTable, rowsOnlyInTarget, type TablePair } from './copy-rows.js';
import { bucketUrl, withoutPassword } from '../store-names.js';
import type { MigrationTarget } from './migration-target.js';
import { readMigrationRecord, recordMigrationStart, recordMigrationVerified } from './migration-record.js';
import { isExact, verifyTable } from './verify-rows.js';

export interface MigrateStoreOptions {
  /** The environment of the source installation: DATA_DIR, and S3_BUCKET… when its blobs are in a bucket. */
  env: Record<string, string | undefined>;
  target: MigrationTarget;
  /** Rows read, compared and written at a time. */
  batchSize: number;
  progress: Progress;
}

export interface MigrateStoreReport {
  tables: number;
  rows: number;
  /** Rows this run wrote (a resumed run writes only what was missing or changed). */
  written: number;
  /** Rows of an earlier run this one deleted, the source having deleted them since. */
  pruned: number;
  blobs: number;
  bytes: number;
  /** Blobs this run copied (0 when they stay where they are). */
  copiedBlobs: number;
  auditRecords: number;
  devCa: 'carried' | 'none';
  /** What the nodes need to run on the copy (no password; S3 endpoint and keys as for this run). */
  nodeEnv: Record<string, string>;
}

/** The tables copied row by row; the development CA (`dev_pki`) is carried apart (carry-dev-ca.ts). */
export const COPIED = TABLE_ORDER.filter((table) => table !== 'dev_pki');

/**
 * `signery migrate-store`: copies an embedded installation (SQLite and the blobs under DATA_DIR) to
 * PostgreSQL, and its blobs to a bucket, then proves the copy: every row compared with the source's,
 * every blob hashed, the development CA carried, the audit chain recomputed on the target.
 *
 * The source may keep running: the copy is the source's snapshot at the start of the run (one read
 * transaction throughout), and blobs are immutable and referenced only by rows of that snapshot. A run
 * may stop anywhere (Ctrl-C, a crash, SIGKILL): run the command again and it resumes, writing only
 * the rows that are missing or differ and copying only the blobs the target lacks; the rows the
 * source has deleted since an earlier run are deleted from the target. So the way over is: a first
 * run while the source serves, then stop it, run again (quick: little is left), start the nodes.
 *
 * It refuses a target that holds data it did not put there, or audit records the source lacks (a
 * server ran on the target), rather than overwrite anything.
 */
export async function migrateStore(options: MigrateStoreOptions): Promise<MigrateStoreReport> {
  const { env, target, batchSize: batch, progress } = options;
  const startedAt = performance.now();
  const config = loadConfig(env);
  if (config.databaseUrl) {
    throw new OperationFailed(
      'DATABASE_URL is set: migrate-store copies an embedded installation (SQLite under DATA_DIR) to the database named by --to. Unset DATABASE_URL and set DATA_DIR to the installation.',
    );
  }
  const file = join(config.dataDir, 'signery.db');
  if (!existsSync(file)) {
    throw new OperationFailed(`There is no installation under DATA_DIR: ${file} does not exist.`);
  }
  const sourcePath = await realpath(file);
  const sourceBlobs = openBlobStore(config);
  const copiesBlobs = target.blobs !== undefined && !sameBucket(config.s3, target.blobs);
  const targetBlobs: BlobStore = copiesBlobs ? new S3BlobStore(target.blobs!) : sourceBlobs;
  const schema = target.schema ?? 'public';
  progress.line(
    `migrate-store: from ${sourcePath} (blobs ${config.s3 ? bucketUrl(config.s3) : 'under DATA_DIR'})`,
  );
  progress.line(
    `  to ${withoutPassword(target.url)}, schema "${schema}" (blobs ${copiesBlobs ? bucketUrl(target.blobs!) : 'where they are'})`,
  );

  const source = openSqliteSnapshot(file);
  let targetDb: DatabaseHandle<Database> | undefined;
  try {
    await refuseOutdatedSource(source);
    const counts = await countAllRows(source.db);
    const total = COPIED.reduce((sum, table) => sum + counts[table], 0);
    const referenced = await countReferencedBlobs(source.db);
    progress.line(
      `source snapshot: ${thousands(total)} rows in ${COPIED.length} tables, ${thousands(referenced.blobs)} blobs (${megabytes(referenced.bytes)})`,
    );

    targetDb = await openPostgres({ url: target.url, schema: target.schema, maxConnections: 4 });
    const resumed = await refuseForeignTarget(targetDb.db, sourcePath, schema);
    progress.line(resumed ? `target: resuming the migration begun ${resumed}` : 'target: empty');
    await recordMigrationStart(targetDb.db, targetDb.dialect, sourcePath, new Date());
    const applied = await migrateToLatest(targetDb);
    if (applied.length > 0) progress.line(`target: ${applied.length} migrations applied`);
    const columns = await columnsOfBoth(source.db, targetDb);
    const pair = (table: TableName): TablePair => ({
      source: source.db,
      target: targetDb!.db,
      table,
      columns: columns.get(table)!,
      batch,
    });

    const devCa = await sourceDevCa(source.db, config.dataDir);
    if (devCa) await refuseOtherDevCa(targetDb.db, devCa);
    await refuseForeignAuditRecords(pair('audit_log'));

    // Children before parents, so that no deletion waits on a foreign key.
    let pruned = 0;
    for (const table of [...COPIED].reverse()) {
      if ((await countRows(targetDb.db, table)) > 0) pruned += await pruneTable(pair(table));
    }
    if (pruned > 0)
      progress.line(`target: ${thousands(pruned)} rows the source deleted since the last run removed`);

    const rowsStartedAt = performance.now();
    let written = 0;
    for (const table of COPIED.filter((t) => counts[t] > 0)) {
      const counter = progress.counter(`rows ${table}`, counts[table]);
      written += (await copyTable(pair(table), counter)).written;
      counter.done();
    }
    await advanceSerialSequences(targetDb.db);
    progress.line(
      `rows: ${thousands(total)} in ${COPIED.length} tables, ${thousands(written)} written, ${thousands(total - written)} already there (${seconds(performance.now() - rowsStartedAt)})`,
    );
    if (devCa) {
      await carryDevCa(targetDb.db, devCa);
      progress.line('development CA: carried into the database, so what the source sealed stays trusted');
    } else {
      progress.line(
        'development CA: none under DATA_DIR/pki (a seal key is configured, or nothing was sealed)',
      );
    }
    const blobCopy = { db: source.db, source: sourceBlobs, target: targetBlobs, progress };
    const copied = copiesBlobs ? await copyBlobs(blobCopy) : { copied: 0 };

    // Verification: everything read back from the target and compared with the snapshot.
    const verifyStartedAt = performance.now();
    const failures: string[] = [];
    const verifyCounter = progress.counter('verify rows', total);
    for (const table of COPIED) {
      const check = await verifyTable(pair(table), verifyCounter);
      if (!isExact(check)) {
        failures.push(
          `${table}: ${check.sourceRows} rows in the source, ${check.targetRows} in the target, ${check.missing} missing, ${check.differing} differing (${check.examples.join('; ')})`,
        );
      }
    }
    verifyCounter.done();
    const blobCheck = await verifyBlobs({ ...blobCopy, sameStore: !copiesBlobs });
    if (blobCheck.repaired > 0)
      progress.line(`blobs: ${blobCheck.repaired} damaged in the target, copied again`);
    if (blobCheck.failed > 0) failures.push(`${blobCheck.failed} blobs: ${blobCheck.failures.join('; ')}`);
    if (devCa) {
      const there = await new DevPkiStore(targetDb.db).load();
      if (!there || !sameDevCa(there, devCa))
        failures.push('the development CA in the target is not the source’s');
    }
    const chain = await verifyAuditChain(targetDb.db);
    for (const b of chain.broken) {
      failures.push(
        `audit chain of tenant ${b.tenantId}: first broken record ${b.recordId} (seq ${b.seq}): ${b.reason}`,
      );
    }
    if (chain.records !== counts.audit_log) {
      failures.push(`audit chain: ${chain.records} records in the target, ${counts.audit_log} in the source`);
    }
    if (failures.length > 0) {
      throw new OperationFailed(
        `VERIFICATION FAILED: the target does not hold an exact copy; run the command again (it copies what differs), and if this stays, keep serving from the source.\n  ${failures.join('\n  ')}`,
      );
    }
    progress.line(
      `verified: every row, ${thousands(blobCheck.checked)} blobs hashed, audit chain of ${thousands(chain.records)} records in ${chain.tenants} tenant chain(s) intact (${seconds(performance.now() - verifyStartedAt)})`,
    );
    await recordMigrationVerified(targetDb.db, sourcePath, new Date());
    progress.line(`done in ${seconds(performance.now() - startedAt)}`);
    return {
      tables: COPIED.length,
      rows: total,
      written,
      pruned,
      blobs: referenced.blobs,
      bytes: referenced.bytes,
      copiedBlobs: copied.copied,
      auditRecords: chain.records,
      devCa: devCa ? 'carried' : 'none',
      nodeEnv: {
        DATABASE_URL: withoutPassword(target.url),
        ...(target.schema ? { DATABASE_SCHEMA: target.schema } : {}),
        ...bucketEnv(target.blobs ?? config.s3, config.dataDir),
      },
    };
  } finally {
    await source.close();
    await targetDb?.close();
    await sourceBlobs.close();
    if (targetBlobs !== sourceBlobs) await targetBlobs.close();
  }
}

/** Refuses a source that this release's migrations have not all been applied to (an older release's). */
async function refuseOutdatedSource(source: DatabaseHandle<Database>): Promise<void> {
  const pending = await pendingMigrations(source);
  if (pending.length > 0) {
    throw new OperationFailed(
      `The installation has not applied the migrations ${pending.join(', ')} of this release: start it once with this release (or run signery migrate), then migrate it.`,
    );
  }
}

/**
 * Refuses a target holding data this command did not put there, or put there from another
 * installation. Answers when the earlier run from this source began, or undefined for an empty target.
 */
async function refuseForeignTarget(
  db: DatabaseHandle<Database>['db'],
  sourcePath: string,
  schema: string,
): Promise<string | undefined> {
  const record = await readMigrationRecord(db);
  if (record) {
    if (record.source !== sourcePath) {
      throw new OperationFailed(
        `The schema "${schema}" holds a migration from another installation (${record.source}). Migrate into an empty schema (--schema) or database.`,
      );
    }
    return record.started_at;
  }
  const present = new Set((await db.introspection.getTables()).map((t) => t.name));
  const filled: string[] = [];
  for (const table of TABLE_ORDER) {
    if (present.has(table) && (await countRows(db, table)) > 0) filled.push(table);
  }
  if (filled.length > 0) {
    throw new OperationFailed(
      `The schema "${schema}" already holds data that signery migrate-store did not put there (rows in ${filled.slice(0, 4).join(', ')}${filled.length > 4 ? ', …' : ''}): nothing was changed. Migrate into an empty schema (--schema) or database.`,
    );
  }
  return undefined;
}

/**
 * Refuses a target holding audit records the source lacks or holds otherwise: a server has run on
 * the target since an earlier run, and going on would erase what it recorded. The source's audit log
 * only ever grows, so a previous run's records are all still there.
 */
async function refuseForeignAuditRecords(pair: TablePair): Promise<void> {
  for await (const { absent, differing } of rowsOnlyInTarget(pair)) {
    if (absent.length > 0 || differing.length > 0) {
      throw new OperationFailed(
        'The target holds audit records the source does not have: a server has run on it since the earlier migration, and going on would erase what it recorded. Nothing was changed; migrate into an empty schema.',
      );
    }
  }
}

/**
 * The columns of every copied table and how their values compare, from the target's types; refuses
 * when the source and the target differ in tables or columns (releases apart).
 */
async function columnsOfBoth(
  source: DatabaseHandle<Database>['db'],
  target: DatabaseHandle<Database>,
): Promise<Map<TableName, Columns>> {
  const sourceTables = new Map((await source.introspection.getTables()).map((t) => [t.name, t]));
  const targetTables = new Map((await target.db.introspection.getTables()).map((t) => [t.name, t]));
  const unknown = [...sourceTables.keys()].filter((name) => !(TABLE_ORDER as string[]).includes(name));
  if (unknown.length > 0) {
    throw new OperationFailed(
      `The installation has tables this release does not know (${unknown.join(', ')}): it was made by a newer release; migrate it with that release.`,
    );
  }
  const columns = new Map<TableName, Columns>();
  for (const table of TABLE_ORDER) {
    const inSource = sourceTables
      .get(table)
      ?.columns.map((c) => c.name)
      .sort();
    // PostgreSQL keeps a few columns SQLite has no use for and fills them itself (the events feed's
    // transaction id and sequence, migration 0023): those may be the target's alone.
    const inTarget = targetTables
      .get(table)
      ?.columns.filter((c) => inSource?.includes(c.name) || !c.hasDefaultValue);
    const targetNames = inTarget?.map((c) => c.name).sort();
    if (!inSource || !inTarget || inSource.join() !== targetNames!.join()) {
      throw new OperationFailed(
        `The table ${table} has other columns in the source (${inSource?.join(', ') ?? 'none'}) than in the target (${targetNames?.join(', ') ?? 'none'}).`,
      );
    }
    columns.set(table, new Map(inTarget.map((c) => [c.name, columnKind(c.dataType)])));
  }
  return columns;
}

/** Where the nodes find the blobs: the bucket, or else DATA_DIR (then one node only: the files are local). */
function bucketEnv(s3: S3Config | undefined, dataDir: string): Record<string, string> {
  if (!s3) return { DATA_DIR: dataDir };
  return { S3_BUCKET: s3.bucket, ...(s3.prefix ? { S3_PREFIX: s3.prefix } : {}) };
}

function sameBucket(a: S3Config | undefined, b: S3Config): boolean {
  return (
    a !== undefined &&
    a.bucket === b.bucket &&
    a.endpoint === b.endpoint &&
    (a.prefix ?? '') === (b.prefix ?? '')
  );
}

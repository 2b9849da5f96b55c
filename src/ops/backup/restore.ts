import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { verifyAuditChain } from '../../audit/verify-chain.js';
import { loadConfig, type Config } from '../../base/config.js';
import { FsBlobStore } from '../../store/blobs/fs.js';
import { openBlobStore } from '../../store/blobs/open-blob-store.js';
import type { BlobStore } from '../../store/blobs/blob-store.js';
import { openDatabase } from '../../store/db/open-database.js';
import { describeSchema, dropSchema, restorePostgres } from '../../store/db/postgres/database-backup.js';
import { restoreSqlite } from '../../store/db/sqlite/database-backup.js';
import { hashBlob } from '../blob-hash.js';
import { forEachConcurrently } from '../concurrently.js';
import { bucketUrl } from '../store-names.js';
import { OperationFailed } from '../operation-failed.js';
import { megabytes, seconds, thousands, type Progress } from '../progress.js';
import { countRows } from '../rows.js';
import type { TableName } from '../tables.js';
import { blobsDir, hashFile, PKI_DIR, readManifest, type BackupManifest } from './manifest.js';

const CONCURRENCY = 8;

export interface RestoreReport {
  rows: number;
  blobs: number;
  auditRecords: number;
}

/**
 * `signery restore <dir>`: puts a backup made by `signery backup` in place as the installation the
 * environment describes (DATA_DIR, DATABASE_URL, S3_*), then proves it.
 *
 * 1. The backup is checked whole before anything is touched: every file and every blob against the
 *    SHA-256 of the manifest (blobs left in a bucket are hashed there). A damaged backup is refused.
 * 2. A target that holds an installation is refused unless `force`, which removes it first.
 * 3. The database, the blobs and the development CA are put in place.
 * 4. The result is checked: the database file's hash (SQLite), the rows of every table, the audit
 *    hash chain, and every restored blob hashed again where it now lives.
 *
 * Stop the servers of the target first: restore replaces their database under them.
 */
export async function restore(options: {
  env: Record<string, string | undefined>;
  dir: string;
  force: boolean;
  progress: Progress;
}): Promise<RestoreReport> {
  const { dir, force, progress } = options;
  const startedAt = performance.now();
  const manifest = await readManifest(dir);
  const config = loadConfig(options.env);
  const kind = config.databaseUrl ? 'postgres' : 'sqlite';
  if (manifest.database.kind !== kind) {
    throw new OperationFailed(
      `The backup is of an installation on ${manifest.database.kind}, the target is on ${kind}: restore it onto ${manifest.database.kind} (then, from SQLite to PostgreSQL, use signery migrate-store).`,
    );
  }
  const inBucket = manifest.blobs.location !== 'backup';
  if (inBucket && (!config.s3 || bucketUrl(config.s3) !== manifest.blobs.location)) {
    throw new OperationFailed(
      `The backup's blobs stayed in the bucket ${manifest.blobs.location}: restore with S3_BUCKET (and S3_PREFIX) naming it.`,
    );
  }
  const blobs = openBlobStore(config);
  try {
    const existing = await existingInstallation(config);
    if (existing.length > 0 && !force) {
      throw new OperationFailed(
        `The target already holds an installation (${existing.join(', ')}): nothing was restored. Restore into an empty one, or pass --force to replace it.`,
      );
    }
    progress.line(`restore: checking the backup in ${dir} against its manifest (${manifest.createdAt})`);
    await checkBackup(dir, manifest, inBucket ? blobs : new FsBlobStore({ root: blobsDir(dir) }), progress);
    await refuseTakenSchemaName(config, manifest);
    if (existing.length > 0)
      progress.line(`--force: removing the target's installation (${existing.join(', ')})`);
    await clearTarget(config);
    await restoreDatabase(config, dir, manifest, progress);
    if (!inBucket) await restoreBlobs(dir, manifest, blobs, progress);
    await restoreDevCa(config, dir, manifest);

    const report = await checkRestored(config, manifest, inBucket ? undefined : blobs, progress);
    progress.line(`restore complete in ${seconds(performance.now() - startedAt)}`);
    return report;
  } finally {
    await blobs.close();
  }
}

/** Step 1: every file and blob of the backup against the manifest. */
async function checkBackup(
  dir: string,
  manifest: BackupManifest,
  blobs: BlobStore,
  progress: Progress,
): Promise<void> {
  const damaged: string[] = [];
  for (const file of manifest.files) {
    const found = await hashFile(join(dir, file.path)).catch(() => undefined);
    if (!found) damaged.push(`${file.path} is missing`);
    else if (found.sha256 !== file.sha256 || found.size !== file.size) {
      damaged.push(`${file.path} does not match its SHA-256`);
    }
  }
  damaged.push(...(await checkBlobs(blobs, manifest.blobs.list, 'check blobs of the backup', progress)));
  if (damaged.length > 0) {
    throw new OperationFailed(
      `The backup in ${dir} is damaged, nothing was restored: ${damaged.slice(0, 5).join('; ')}${damaged.length > 5 ? `; and ${damaged.length - 5} more` : ''}.`,
    );
  }
}

/** Hashes each blob where `store` keeps it; answers what does not match, in words. */
async function checkBlobs(
  store: BlobStore,
  list: BackupManifest['blobs']['list'],
  label: string,
  progress: Progress,
): Promise<string[]> {
  const problems: string[] = [];
  let bytes = 0;
  const counter = progress.counter(label, list.length, () => `${megabytes(bytes)} hashed`);
  await forEachConcurrently(list, CONCURRENCY, async (blob) => {
    const found = await hashBlob(store, blob.sha256).catch(() => undefined);
    if (!found) problems.push(`blob ${blob.sha256} is missing`);
    else if (found.sha256 !== blob.sha256 || found.size !== blob.size) {
      problems.push(`blob ${blob.sha256} does not match its SHA-256`);
    }
    bytes += blob.size;
    counter.add();
  });
  counter.done();
  return problems;
}

/** What of an installation the target holds (none: an empty target). */
async function existingInstallation(config: Config): Promise<string[]> {
  const found: string[] = [];
  const paths = targetPaths(config);
  if (config.databaseUrl) {
    const name = config.databaseSchema ?? 'public';
    const { tables } = await describeSchema(config.databaseUrl, name);
    if (tables.length > 0) found.push(`the schema "${name}" has ${tables.length} tables`);
  } else {
    if (existsSync(paths.sqliteFile)) found.push(`${paths.sqliteFile} exists`);
    if (existsSync(paths.pki)) found.push(`${paths.pki} exists`);
  }
  if (paths.localBlobs && (await hasBlobs(paths.localBlobs))) found.push(`${paths.localBlobs} holds blobs`);
  return found;
}

/**
 * A dump is restored under its own schema's name, then renamed (restorePostgres): another schema
 * of that name in the target database would be in the way.
 */
async function refuseTakenSchemaName(config: Config, manifest: BackupManifest): Promise<void> {
  const { database } = manifest;
  const schema = config.databaseSchema ?? 'public';
  if (database.kind !== 'postgres' || database.schema === schema) return;
  if ((await describeSchema(config.databaseUrl!, database.schema)).exists) {
    throw new OperationFailed(
      `The backup's schema "${database.schema}" exists in the target database: a dump is restored under its own name, then renamed "${schema}", so that name must be free. Restore into another database, or drop "${database.schema}". Nothing was restored.`,
    );
  }
}

/**
 * Step 2: removes what the target holds of an installation. An empty schema goes too: the dump
 * creates its schema itself.
 */
async function clearTarget(config: Config): Promise<void> {
  const paths = targetPaths(config);
  if (config.databaseUrl) {
    await dropSchema(config.databaseUrl, config.databaseSchema ?? 'public');
  } else {
    for (const suffix of ['', '-wal', '-shm']) await rm(`${paths.sqliteFile}${suffix}`, { force: true });
    await rm(paths.pki, { recursive: true, force: true });
  }
  if (paths.localBlobs) await rm(paths.localBlobs, { recursive: true, force: true });
}

function targetPaths(config: Config): { sqliteFile: string; pki: string; localBlobs: string | undefined } {
  return {
    sqliteFile: join(config.dataDir, 'signery.db'),
    pki: join(config.dataDir, PKI_DIR),
    localBlobs: config.s3 ? undefined : join(config.dataDir, 'blobs'),
  };
}

async function hasBlobs(root: string): Promise<boolean> {
  for await (const _ of new FsBlobStore({ root }).list()) return true;
  return false;
}

/** Step 3: the database. */
async function restoreDatabase(
  config: Config,
  dir: string,
  manifest: BackupManifest,
  progress: Progress,
): Promise<void> {
  const database = manifest.database;
  if (database.kind === 'postgres') {
    const schema = config.databaseSchema ?? 'public';
    progress.line(`database: pg_restore into schema "${schema}"`);
    await restorePostgres({
      url: config.databaseUrl!,
      file: join(dir, database.file),
      dumpedSchema: database.schema,
      schema,
    });
    return;
  }
  const file = join(config.dataDir, 'signery.db');
  progress.line(`database: ${file}`);
  await mkdir(config.dataDir, { recursive: true });
  await restoreSqlite(join(dir, database.file), file);
  // Hashed again before anything opens it: what is in place is what was backed up.
  const expected = manifest.files.find((f) => f.path === database.file)!;
  if ((await hashFile(file)).sha256 !== expected.sha256) {
    throw new OperationFailed(
      `${file} does not match the backup's SHA-256 once written: the disk is failing?`,
    );
  }
}

/** Step 3: the blobs kept in the backup, into the target's store (hashed on their way in). */
async function restoreBlobs(
  dir: string,
  manifest: BackupManifest,
  blobs: BlobStore,
  progress: Progress,
): Promise<void> {
  const from = new FsBlobStore({ root: blobsDir(dir) });
  let bytes = 0;
  const counter = progress.counter('blobs restored', manifest.blobs.list.length, () => megabytes(bytes));
  await forEachConcurrently(manifest.blobs.list, CONCURRENCY, async (blob) => {
    const stored = await blobs.put(await from.get(blob.sha256));
    if (stored.sha256 !== blob.sha256)
      throw new OperationFailed(`blob ${blob.sha256} changed while it was restored`);
    bytes += blob.size;
    counter.add();
  });
  counter.done();
}

/** Step 3: the development CA of an SQLite installation, back under DATA_DIR/pki. */
async function restoreDevCa(config: Config, dir: string, manifest: BackupManifest): Promise<void> {
  const files = manifest.files.filter((f) => f.path.startsWith(`${PKI_DIR}/`));
  if (files.length === 0) return;
  const to = join(config.dataDir, PKI_DIR);
  await mkdir(to, { recursive: true, mode: 0o700 });
  for (const file of files) {
    const target = join(config.dataDir, file.path);
    await copyFile(join(dir, file.path), target);
    await chmod(target, 0o600);
    if ((await hashFile(target)).sha256 !== file.sha256) {
      throw new OperationFailed(`${target} does not match the backup's SHA-256 once written`);
    }
  }
  // Only what the backup held: nothing else is in there.
  if ((await readdir(to)).length !== files.length)
    throw new OperationFailed(`${to} holds files the backup did not`);
}

/** Step 4: rows per table, the audit chain, and the restored blobs hashed where they now live. */
async function checkRestored(
  config: Config,
  manifest: BackupManifest,
  restoredBlobs: BlobStore | undefined,
  progress: Progress,
): Promise<RestoreReport> {
  const problems: string[] = [];
  const handle = await openDatabase(config);
  let rows = 0;
  let auditRecords = 0;
  try {
    for (const [table, expected] of Object.entries(manifest.rows)) {
      const found = await countRows(handle.db, table as TableName);
      rows += found;
      if (found !== expected) problems.push(`${table} has ${found} rows, the backup ${expected}`);
    }
    const chain = await verifyAuditChain(handle.db);
    auditRecords = chain.records;
    for (const b of chain.broken) {
      problems.push(
        `audit chain of tenant ${b.tenantId}: first broken record ${b.recordId} (seq ${b.seq}): ${b.reason}`,
      );
    }
    progress.line(
      `database: ${thousands(rows)} rows; audit chain of ${thousands(chain.records)} records in ${chain.tenants} tenant chain(s) ${chain.broken.length === 0 ? 'intact' : 'BROKEN'}`,
    );
  } finally {
    await handle.close();
  }
  if (restoredBlobs) {
    problems.push(
      ...(await checkBlobs(restoredBlobs, manifest.blobs.list, 'check restored blobs', progress)),
    );
  }
  if (problems.length > 0) {
    throw new OperationFailed(`RESTORE FAILED its checks: ${problems.slice(0, 5).join('; ')}`);
  }
  return { rows, blobs: manifest.blobs.list.length, auditRecords };
}

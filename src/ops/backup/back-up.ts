import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { loadConfig, type Config } from '../../base/config.js';
import type { BlobStore } from '../../store/blobs/blob-store.js';
import { FsBlobStore } from '../../store/blobs/fs.js';
import { openBlobStore } from '../../store/blobs/open-blob-store.js';
import { openDatabase } from '../../store/db/open-database.js';
import { dumpPostgres } from '../../store/db/postgres/database-backup.js';
import type { Database } from '../../store/db/schema.js';
import { backupSqlite } from '../../store/db/sqlite/database-backup.js';
import { openSqliteSnapshot } from '../../store/db/sqlite/read-snapshot.js';
import { hashBlob } from '../blob-hash.js';
import { forEachConcurrently } from '../concurrently.js';
import { countAllRows, referencedBlobs, type BlobRef } from '../inventory.js';
import { bucketUrl } from '../store-names.js';
import { OperationFailed } from '../operation-failed.js';
import { megabytes, seconds, thousands, type Progress } from '../progress.js';
import {
  blobsDir,
  manifestFile,
  PG_FILE,
  PKI_DIR,
  SQLITE_FILE,
  writeManifest,
  type BackupManifest,
  type ManifestFile,
} from './manifest.js';

const CONCURRENCY = 8;
const PAGE = 1000;

export interface BackupReport {
  rows: number;
  blobs: number;
  bytes: number;
  /** `backup` when the blobs were copied into it, else the bucket they stay in. */
  blobLocation: string;
}

/**
 * `signery backup <dir>`: a backup that restores, made while the server runs. The database first, as
 * one consistent snapshot (SQLite's online backup API; pg_dump reading an exported snapshot), then
 * the blobs that snapshot references: copied into the backup when they live under DATA_DIR (each
 * hashed on its way, so a damaged one stops the backup), or listed with their hashes when they live
 * in a bucket (the bucket's own versioning or replication keeps their bytes), then the development
 * CA of an SQLite installation (DATA_DIR/pki; on PostgreSQL it is in the dump), and last the
 * manifest, which lists every file with its SHA-256.
 */
export async function backUp(options: {
  env: Record<string, string | undefined>;
  dir: string;
  progress: Progress;
}): Promise<BackupReport> {
  const { dir, progress } = options;
  const startedAt = performance.now();
  const config = loadConfig(options.env);
  if (existsSync(dir) && (await readdir(dir)).length > 0) {
    throw new OperationFailed(`${dir} is not empty: back up into a new directory.`);
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const blobs = openBlobStore(config);
  try {
    const { database, rows, referenced } = await backUpDatabase(config, dir, progress);
    const total = Object.values(rows).reduce((sum, n) => sum + n, 0);
    progress.line(`database: ${thousands(total)} rows, ${thousands(referenced.length)} blobs referenced`);
    const location = config.s3 ? bucketUrl(config.s3) : 'backup';
    await backUpBlobs(
      blobs,
      config.s3 ? undefined : new FsBlobStore({ root: blobsDir(dir) }),
      referenced,
      progress,
    );
    const files: ManifestFile[] = [await manifestFile(dir, database.file)];
    if (database.kind === 'sqlite') files.push(...(await backUpDevCa(config, dir)));
    await writeManifest(dir, {
      createdAt: new Date().toISOString(),
      database,
      rows,
      blobs: { location, list: referenced },
      files,
    });
    const bytes = referenced.reduce((sum, b) => sum + b.size, 0);
    progress.line(`backup complete in ${seconds(performance.now() - startedAt)}`);
    return { rows: total, blobs: referenced.length, bytes, blobLocation: location };
  } finally {
    await blobs.close();
  }
}

async function backUpDatabase(
  config: Config,
  dir: string,
  progress: Progress,
): Promise<{ database: BackupManifest['database']; rows: Record<string, number>; referenced: BlobRef[] }> {
  if (config.databaseUrl) {
    const handle = await openDatabase(config);
    try {
      const schema = handle.schema ?? 'public';
      progress.line(`database: pg_dump of schema "${schema}"`);
      const { rows, referenced } = await dumpPostgres({
        handle,
        url: config.databaseUrl,
        file: join(dir, PG_FILE),
        inSnapshot: inventory,
      });
      return { database: { kind: 'postgres', file: PG_FILE, schema }, rows, referenced };
    } finally {
      await handle.close();
    }
  }
  const file = join(config.dataDir, 'signery.db');
  if (!existsSync(file))
    throw new OperationFailed(`There is no installation under DATA_DIR: ${file} does not exist.`);
  progress.line(`database: online backup of ${file}`);
  await backupSqlite(file, join(dir, SQLITE_FILE));
  const copy = openSqliteSnapshot(join(dir, SQLITE_FILE));
  try {
    return { database: { kind: 'sqlite', file: SQLITE_FILE }, ...(await inventory(copy.db)) };
  } finally {
    await copy.close();
  }
}

/** Rows per table and the blobs referenced, read from the database as the backup holds it. */
async function inventory(
  db: Kysely<Database>,
): Promise<{ rows: Record<string, number>; referenced: BlobRef[] }> {
  const referenced: BlobRef[] = [];
  for await (const page of referencedBlobs(db, PAGE)) referenced.push(...page);
  return { rows: await countAllRows(db), referenced };
}

/**
 * Copies each blob into the backup (`into`), or, when there is none (a bucket), hashes it where it is.
 * Either way the bytes are hashed and must match the key.
 */
async function backUpBlobs(
  store: BlobStore,
  into: BlobStore | undefined,
  referenced: BlobRef[],
  progress: Progress,
): Promise<void> {
  let bytes = 0;
  const counter = progress.counter(
    into ? 'blobs copied' : 'blobs hashed in the bucket',
    referenced.length,
    () => megabytes(bytes),
  );
  const damaged: string[] = [];
  await forEachConcurrently(referenced, CONCURRENCY, async (blob) => {
    const found = into ? await into.put(await store.get(blob.sha256)) : await hashBlob(store, blob.sha256);
    if (found.sha256 !== blob.sha256 || found.size !== blob.size) damaged.push(blob.sha256);
    bytes += blob.size;
    counter.add();
  });
  counter.done();
  if (damaged.length > 0) {
    throw new OperationFailed(
      `${damaged.length} blobs of the installation do not hold the bytes their names promise (${damaged.slice(0, 3).join(', ')}): the installation is damaged, and this backup is not complete.`,
    );
  }
}

/** Copies DATA_DIR/pki (the development CA of an SQLite installation) into the backup. */
async function backUpDevCa(config: Config, dir: string): Promise<ManifestFile[]> {
  const from = join(config.dataDir, PKI_DIR);
  if (!existsSync(from)) return [];
  const to = join(dir, PKI_DIR);
  await mkdir(to, { mode: 0o700 });
  const files: ManifestFile[] = [];
  const entries = await readdir(from, { withFileTypes: true });
  for (const name of entries
    .filter((e) => e.isFile())
    .map((e) => e.name)
    .sort()) {
    await copyFile(join(from, name), join(to, name));
    // The keys stay readable by their owner only.
    await chmod(join(to, name), 0o600);
    files.push(await manifestFile(dir, `${PKI_DIR}/${name}`));
  }
  return files;
}

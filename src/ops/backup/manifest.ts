import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isSha256 } from '../../store/blobs/blob-store.js';
import { OperationFailed } from '../operation-failed.js';
import { TABLE_ORDER } from '../tables.js';

/**
 * What a backup directory holds, written last (`manifest.json`): a directory without one is an
 * unfinished backup. Every file is listed with its SHA-256 and every blob the database references
 * with its key (the SHA-256 of its bytes), so that a restore proves the backup intact before it
 * touches anything, and the restored installation after.
 *
 * ```
 * manifest.json
 * database.sqlite | database.pgdump    the database (SQLite online backup | pg_dump, custom format)
 * blobs/ab/cd/abcd…                    the blobs, when the installation keeps them under DATA_DIR
 * pki/…                                the development CA of an SQLite installation (DATA_DIR/pki)
 * ```
 */
export interface BackupManifest {
  format: typeof FORMAT;
  version: 1;
  createdAt: string;
  database:
    { kind: 'sqlite'; file: typeof SQLITE_FILE } | { kind: 'postgres'; file: typeof PG_FILE; schema: string };
  /** Rows of each table in the database backed up. */
  rows: Record<string, number>;
  /**
   * The blobs the database's files reference: `location` is `backup` (they are under `blobs/`), or
   * the bucket (`s3://bucket/prefix`) they were listed and hashed in, and stay in.
   */
  blobs: { location: string; list: { sha256: string; size: number }[] };
  /** Every file of the backup except the manifest and the blobs, with its size and SHA-256. */
  files: ManifestFile[];
}

export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

const FORMAT = 'signery-backup';
export const MANIFEST = 'manifest.json';
export const SQLITE_FILE = 'database.sqlite';
export const PG_FILE = 'database.pgdump';
export const BLOBS_DIR = 'blobs';
export const PKI_DIR = 'pki';
const PKI_FILE = /^pki\/[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** SHA-256 and size of a file, read as a stream. */
export async function hashFile(path: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

/** A file of the backup (`path` relative to `dir`) as the manifest lists it. */
export async function manifestFile(dir: string, path: string): Promise<ManifestFile> {
  return { path, ...(await hashFile(join(dir, path))) };
}

/** Writes the manifest last and atomically: until it is there, the directory is no backup. */
export async function writeManifest(
  dir: string,
  manifest: Omit<BackupManifest, 'format' | 'version'>,
): Promise<void> {
  const staging = join(dir, `${MANIFEST}.writing`);
  const handle = await open(staging, 'wx');
  try {
    await handle.writeFile(`${JSON.stringify({ format: FORMAT, version: 1, ...manifest }, null, 1)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(staging, join(dir, MANIFEST));
}

/**
 * Reads and checks the manifest of the backup in `dir`: its shape, and that every path in it stays
 * inside the backup (a manifest is input, and restore writes what it names).
 */
export async function readManifest(dir: string): Promise<BackupManifest> {
  let text: string;
  try {
    text = await readFile(join(dir, MANIFEST), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      const exists = await stat(dir).then(
        () => true,
        () => false,
      );
      throw new OperationFailed(
        exists
          ? `${dir} holds no ${MANIFEST}: it is not a backup, or one that did not finish.`
          : `There is no backup at ${dir}.`,
      );
    }
    throw error;
  }
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(text) as BackupManifest;
  } catch {
    throw new OperationFailed(`${join(dir, MANIFEST)} is not valid JSON: the backup is damaged.`);
  }
  if (!isManifest(manifest)) {
    throw new OperationFailed(
      `${join(dir, MANIFEST)} is not a manifest of a Signery backup (or a damaged one).`,
    );
  }
  return manifest;
}

function isManifest(m: BackupManifest): boolean {
  if (typeof m !== 'object' || m === null || m.format !== FORMAT || m.version !== 1) return false;
  const db = m.database as { kind?: unknown; file?: unknown; schema?: unknown } | undefined;
  const database =
    (db?.kind === 'sqlite' && db.file === SQLITE_FILE) ||
    (db?.kind === 'postgres' &&
      db.file === PG_FILE &&
      typeof db.schema === 'string' &&
      /^[a-z_][a-z0-9_]{0,62}$/.test(db.schema));
  const rows =
    typeof m.rows === 'object' &&
    m.rows !== null &&
    Object.entries(m.rows).every(
      ([table, n]) => (TABLE_ORDER as string[]).includes(table) && Number.isInteger(n) && n >= 0,
    );
  const blobs =
    typeof m.blobs?.location === 'string' &&
    Array.isArray(m.blobs.list) &&
    m.blobs.list.every((b) => isSha256(b?.sha256) && Number.isInteger(b.size) && b.size >= 0);
  const files =
    Array.isArray(m.files) &&
    m.files.every(
      (f) =>
        (f?.path === m.database?.file || PKI_FILE.test(f?.path)) &&
        isSha256(f.sha256) &&
        Number.isInteger(f.size),
    );
  return database && rows && blobs && files;
}

/** Where a blob is kept in a backup directory: the layout of FsBlobStore, which writes and reads it. */
export function blobsDir(dir: string): string {
  return join(dir, BLOBS_DIR);
}

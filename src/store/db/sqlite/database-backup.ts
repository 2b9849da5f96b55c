import { constants } from 'node:fs';
import { copyFile, open, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

/**
 * Copies the SQLite database `file` into the new file `destination` with SQLite's online backup API,
 * while the server goes on using it. All pages are copied in one step, inside one read transaction,
 * so the copy is the database as it was at one moment: a copy made a few pages at a time starts
 * again whenever another process writes, and may never finish beside a busy server. The copy is
 * checked (`quick_check`) before this returns.
 *
 * ```ts
 * await backupSqlite(join(dataDir, 'signery.db'), join(backupDir, 'database.sqlite'));
 * ```
 */
export async function backupSqlite(file: string, destination: string): Promise<void> {
  const source = new BetterSqlite3(file, { fileMustExist: true, readonly: true });
  try {
    source.pragma('busy_timeout = 5000');
    // better-sqlite3's first step copies no page; what the callback returns is the next step's size.
    await source.backup(destination, { progress: () => 0x7fffffff });
  } finally {
    source.close();
  }
  const copy = new BetterSqlite3(destination, { fileMustExist: true });
  try {
    // One self-contained file (no -wal beside it) that opens read-only anywhere; the server sets
    // WAL again when it opens the restored file.
    copy.pragma('journal_mode = DELETE');
    const verdict: unknown = copy.pragma('quick_check', { simple: true });
    if (verdict !== 'ok') throw new Error(`the backup copy of ${file} is damaged: ${String(verdict)}`);
  } finally {
    copy.close();
  }
}

/**
 * Puts the database file of a backup in place as `file`, which must not exist: copied next to it,
 * made durable, then renamed, so a crash leaves either no database or the whole of it.
 */
export async function restoreSqlite(backupFile: string, file: string): Promise<void> {
  const staging = `${file}.restoring`;
  await rm(staging, { force: true });
  await copyFile(backupFile, staging, constants.COPYFILE_EXCL);
  await syncPath(staging, 'r+');
  await rename(staging, file);
  await syncPath(dirname(file), 'r');
}

async function syncPath(path: string, flags: string): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

import { spawn } from 'node:child_process';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { DatabaseHandle } from '../dialect.js';
import type { Database } from '../schema.js';

/**
 * Dumps the schema of `handle` into `file` with `pg_dump` (custom format, without owners and
 * grants, so it restores under another role) and runs `inSnapshot` on the very snapshot pg_dump
 * reads: a repeatable-read transaction exports its snapshot and pg_dump imports it, so what
 * `inSnapshot` counts is what the dump holds, while the server goes on writing.
 *
 * ```ts
 * const counts = await dumpPostgres({ handle, url, file: 'database.pgdump', inSnapshot: countAllRows });
 * ```
 */
export async function dumpPostgres<T>(options: {
  handle: DatabaseHandle<Database>;
  url: string;
  file: string;
  inSnapshot: (db: Kysely<Database>) => Promise<T>;
}): Promise<T> {
  const { handle, url, file } = options;
  const schema = handle.schema ?? 'public';
  return handle.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .setAccessMode('read only')
    .execute(async (trx) => {
      const { rows } = await sql<{ snapshot: string }>`select pg_export_snapshot() as snapshot`.execute(trx);
      const dumping = runTool(
        'pg_dump',
        [
          '--format=custom',
          '--no-owner',
          '--no-acl',
          `--schema=${schema}`,
          `--snapshot=${rows[0]!.snapshot}`,
          `--file=${file}`,
        ],
        url,
      );
      // The snapshot lives as long as this transaction: both must be done before it ends.
      const [read, dumped] = await Promise.allSettled([options.inSnapshot(trx), dumping]);
      if (dumped.status === 'rejected') throw dumped.reason;
      if (read.status === 'rejected') throw read.reason;
      return read.value;
    });
}

/**
 * Restores a dump of `dumpedSchema` made by `dumpPostgres` into the database of `url` as `schema`,
 * in one transaction (a failure leaves nothing behind). The dump creates its schema itself, so
 * neither `dumpedSchema` nor `schema` may exist; a dump restored under another name is renamed once
 * restored (its sequences are bound to their columns, not to the schema's name).
 */
export async function restorePostgres(options: {
  url: string;
  file: string;
  dumpedSchema: string;
  schema: string;
}): Promise<void> {
  const { url, file, dumpedSchema, schema } = options;
  await runTool(
    'pg_restore',
    ['--no-owner', '--no-acl', '--exit-on-error', '--single-transaction', file],
    url,
  );
  if (schema !== dumpedSchema) {
    await withClient(url, (client) =>
      client.query(`alter schema ${quoteIdentifier(dumpedSchema)} rename to ${quoteIdentifier(schema)}`),
    );
  }
}

/** Whether `schema` exists in the database of `url`, and the tables it holds. */
export async function describeSchema(
  url: string,
  schema: string,
): Promise<{ exists: boolean; tables: string[] }> {
  return withClient(url, async (client) => {
    const exists = await client.query('select 1 from pg_catalog.pg_namespace where nspname = $1', [schema]);
    const tables = await client.query<{ table_name: string }>(
      'select table_name from information_schema.tables where table_schema = $1 order by table_name',
      [schema],
    );
    return { exists: exists.rowCount === 1, tables: tables.rows.map((row) => row.table_name) };
  });
}

/** Drops `schema` and everything in it (restore --force). */
export async function dropSchema(url: string, schema: string): Promise<void> {
  await withClient(url, (client) => client.query(`drop schema if exists ${quoteIdentifier(schema)} cascade`));
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Runs one of PostgreSQL's client tools on the database of `url`. The password goes in PGPASSWORD,
 * not on the command line, where any user of the machine could read it (`ps`).
 */
function runTool(command: string, args: string[], url: string): Promise<void> {
  const target = new URL(url);
  const password = decodeURIComponent(target.password);
  target.password = '';
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args, `--dbname=${target.toString()}`], {
      env: { ...process.env, ...(password ? { PGPASSWORD: password } : {}) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'ENOENT'
          ? new Error(
              `${command} was not found: install PostgreSQL's client tools (Debian: postgresql-client)`,
            )
          : error,
      );
    });
    child.on('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} failed (exit ${code ?? 'by a signal'}): ${stderr.trim()}`));
    });
  });
}

#!/usr/bin/env node
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './base/config.js';
import { InvalidArguments, OperationFailed } from './ops/operation-failed.js';
import type { JobSelection } from './ops/jobs/job-selection.js';

// Each command imports what it needs when it runs (`await import(…)` below): the server's modules take
// seconds to load, which `signery --version`, `signery jobs list` or an MCP client starting
// `signery mcp` would otherwise wait for (bench/start measures it).

const USAGE = `Usage: signery <command>

Commands:
  serve                         start the API server (same as npm start)
  worker                        run the job worker only, no HTTP (beside API nodes with JOB_WORKER=false)
  migrate                       apply pending database migrations and exit
  create-admin <name> [tenant]  create a super-administrator; the password is read from
                                ADMIN_PASSWORD or, when unset, asked for without being shown (or
                                read from standard input when it is not a terminal)
  audit verify                  recompute every tenant's audit hash chain; exits 1 and names the
                                first broken record of each tenant when one was changed or removed
  migrate-store --to postgres://… [--schema name] [--blobs s3://bucket/prefix] [--batch-size n]
                                copy this embedded installation (SQLite and files under DATA_DIR) to
                                PostgreSQL (and its files to a bucket), verify every row and file,
                                the development CA and the audit chain; run again to resume
  backup <dir>                  back up the running installation into the new directory <dir>: the
                                database (SQLite online backup, or pg_dump), its files (or, in a
                                bucket, their hashes) and a manifest with the SHA-256 of everything
  restore <dir> [--force]       check the backup in <dir>, put it in place as the installation the
                                environment names (refused if one is there, unless --force), then
                                check the result: rows, files and the audit chain
  verify <file.pdf> [--trust root.pem]… [--online]
                                check a PDF offline, with no server and no database: every signature
                                and the level it proves, and the audit trail it carries; prints a JSON
                                report with the headline every verifier gives and exits 0 when valid,
                                1 when changed, invalid or unsigned, 3 when unconfirmed (intact and
                                unchanged, but a signer's chain ends at none of the --trust roots, or
                                the file does not establish its revocation status); --online asks a
                                trusted chain's OCSP responders and CRLs when the file does not
  jobs list|retry|cancel [id…] [--type t]… [--state s]… [--older-than 1h] [--json]
                                the job queue: list jobs (at most --limit, 100 by default); retry
                                runs failed ones again now (dead ones as a new series of attempts,
                                those waiting for a retry at once); cancel takes queued ones off the
                                queue (never a running one: it says so). States: ready, delayed,
                                waiting, running, dead, done; --older-than counts from the enqueueing.
                                retry and cancel need an id or a filter (--all: every job); they exit
                                1 when a job named or matched could not be changed

  mcp                           the MCP server for AI agents over stdio: relays to PUBLIC_URL/mcp (or
                                SIGNERY_URL) with the API key in SIGNERY_API_KEY

  --version                     print this release's version
  help, -h, --help              print this help

Configuration comes from the environment variables listed in docs/configuration.md.`;

/**
 * The password for create-admin: typed at a terminal without being shown (nothing is echoed, not
 * even stars), or read from standard input when it is a pipe.
 */
async function readPassword(prompt: string): Promise<string> {
  if (!process.stdin.isTTY) return readStdin();
  const stdin = process.stdin;
  // Echo off before the prompt shows: what is typed after it is never on the screen.
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  process.stderr.write(prompt);
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = '';
      const onData = (chunk: string) => {
        for (const char of chunk) {
          if (char === '\r' || char === '\n' || char === '\u0004') {
            stdin.off('data', onData);
            process.stderr.write('\n');
            resolve(typed);
            return;
          }
          if (char === '\u0003') {
            stdin.off('data', onData);
            reject(new InvalidArguments('create-admin was interrupted'));
            return;
          }
          typed = char === '\u007f' || char === '\b' ? typed.slice(0, -1) : typed + char;
        }
      };
      stdin.on('data', onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'serve':
      await (await import('./main.js')).serve();
      return -1;
    case 'worker':
      await (await import('./main.js')).work();
      return -1;
    case 'migrate': {
      const { openDatabase, migrateToLatest } = await databaseModules();
      const database = await openDatabase(loadConfig());
      try {
        const applied = await migrateToLatest(database);
        console.log(applied.length ? `applied: ${applied.join(', ')}` : 'the database is up to date');
      } finally {
        await database.close();
      }
      return 0;
    }
    case 'create-admin': {
      const config = loadConfig();
      const name = args[0];
      if (!name) {
        console.error(USAGE);
        return 2;
      }
      const password = config.admin.password ?? (await readPassword(`Password for ${name}: `));
      if (password.length < 8) {
        console.error('The password must have at least 8 characters (ADMIN_PASSWORD or standard input).');
        return 2;
      }
      const { openDatabase, migrateToLatest } = await databaseModules();
      const { systemClock } = await import('./base/clock.js');
      const { bootstrapAdmin } = await import('./users/bootstrap-admin.js');
      const database = await openDatabase(config);
      try {
        await migrateToLatest(database);
        const deps = { db: database.db, dialect: database.dialect, clock: systemClock, config };
        const created = await bootstrapAdmin(deps, {
          tenant: args[1] ?? config.admin.tenant,
          name,
          password,
        });
        console.log(
          created
            ? `created super-administrator ${name}`
            : `a user named ${name} already exists; nothing changed`,
        );
        return created ? 0 : 1;
      } finally {
        await database.close();
      }
    }
    case 'verify': {
      const { values, positionals } = parseArgs({
        args,
        options: { trust: { type: 'string', multiple: true }, online: { type: 'boolean' } },
        allowPositionals: true,
      });
      const [path] = positionals;
      if (!path || positionals.length > 1) {
        console.error(USAGE);
        return 2;
      }
      const { readCertificates } = await import('./pki/read-certificates.js');
      let pdf: Uint8Array;
      let trustAnchors: Uint8Array[];
      try {
        pdf = new Uint8Array(await readFile(path));
        trustAnchors = (
          await Promise.all(
            (values.trust ?? []).map(async (file) => {
              const certificates = readCertificates(await readFile(file));
              if (!certificates) throw new Error(`${file}: not a PEM or DER X.509 certificate`);
              return certificates;
            }),
          )
        ).flat();
      } catch (error) {
        console.error(`Cannot read ${(error as Error).message}`);
        return 2;
      }
      // --online: the revocation settings of the environment (REVOCATION_ALLOW_PRIVATE, REVOCATION_TIMEOUT_MS).
      const { verifyFile } = await import('./ops/verify-file.js');
      // The server's modules (app.js) only for --online, whose fetcher is the server's own.
      const online = values.online
        ? (await import('./app.js')).revocationFetcher(loadConfig().revocation)
        : undefined;
      let report;
      try {
        report = await verifyFile(pdf, {
          trustAnchors,
          ...(online ? { fetchRevocation: (chain, now) => online.fetcher.currentStatus(chain, now) } : {}),
        });
      } finally {
        online?.close();
      }
      console.log(JSON.stringify(report, null, 2));
      // 0 valid; 1 changed, invalid or unsigned; 3 unconfirmed (intact, unchanged, a signer not confirmed).
      return report.verdict === 'valid' ? 0 : report.verdict === 'unconfirmed' ? 3 : 1;
    }
    case 'audit': {
      if (args[0] !== 'verify') {
        console.error(USAGE);
        return 2;
      }
      const { openDatabase, migrateToLatest } = await databaseModules();
      const { verifyAuditChain } = await import('./audit/verify-chain.js');
      const database = await openDatabase(loadConfig());
      try {
        await migrateToLatest(database);
        const { tenants, records, broken } = await verifyAuditChain(database.db);
        for (const b of broken) {
          console.log(
            `BROKEN tenant ${b.tenantId}: first broken record ${b.recordId} (seq ${b.seq}): ${b.reason}`,
          );
        }
        console.log(
          `${broken.length === 0 ? 'OK' : 'FAILED'}: ${records} audit records in ${tenants} tenant chains checked, ${broken.length} broken`,
        );
        return broken.length === 0 ? 0 : 1;
      } finally {
        await database.close();
      }
    }
    case 'migrate-store': {
      const { values } = parseArgs({
        args,
        options: {
          to: { type: 'string' },
          schema: { type: 'string' },
          blobs: { type: 'string' },
          'batch-size': { type: 'string', default: '500' },
        },
      });
      const batchSize = Number(values['batch-size']);
      if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10_000) {
        throw new InvalidArguments('--batch-size must be an integer from 1 to 10000');
      }
      const { migrateStore } = await import('./ops/migrate-store/migrate-store.js');
      const { parseMigrationTarget } = await import('./ops/migrate-store/migration-target.js');
      const { Progress, thousands, megabytes } = await import('./ops/progress.js');
      const report = await migrateStore({
        env: process.env,
        target: parseMigrationTarget(values, process.env),
        batchSize,
        progress: new Progress(),
      });
      console.log(
        `VERIFIED: ${thousands(report.rows)} rows in ${report.tables} tables, ${thousands(report.blobs)} blobs (${megabytes(report.bytes)}), ${thousands(report.auditRecords)} audit records chained, development CA ${report.devCa === 'carried' ? 'carried' : 'absent'}.`,
      );
      const nodeEnv = Object.entries(report.nodeEnv).map(([k, v]) => `${k}=${v}`);
      console.log(
        `Start the nodes with ${nodeEnv.join(' ')}${report.nodeEnv.S3_BUCKET ? ' and the S3_* settings of this run' : ' (one node: its files stay under DATA_DIR)'}.`,
      );
      return 0;
    }
    case 'backup': {
      const { positionals } = parseArgs({ args, allowPositionals: true });
      if (positionals.length !== 1) throw new InvalidArguments('backup takes one directory');
      const { backUp } = await import('./ops/backup/back-up.js');
      const { Progress, thousands, megabytes } = await import('./ops/progress.js');
      const report = await backUp({ env: process.env, dir: positionals[0]!, progress: new Progress() });
      console.log(
        `BACKED UP: ${thousands(report.rows)} rows, ${thousands(report.blobs)} blobs (${megabytes(report.bytes)}) ${report.blobLocation === 'backup' ? 'copied' : `hashed in ${report.blobLocation}`}; manifest written.`,
      );
      return 0;
    }
    case 'restore': {
      const { positionals, values } = parseArgs({
        args,
        allowPositionals: true,
        options: { force: { type: 'boolean', default: false } },
      });
      if (positionals.length !== 1) throw new InvalidArguments('restore takes one directory');
      const { restore } = await import('./ops/backup/restore.js');
      const { Progress, thousands } = await import('./ops/progress.js');
      const report = await restore({
        env: process.env,
        dir: positionals[0]!,
        force: values.force,
        progress: new Progress(),
      });
      console.log(
        `RESTORED and verified: ${thousands(report.rows)} rows, ${thousands(report.blobs)} blobs, ${thousands(report.auditRecords)} audit records chained.`,
      );
      return 0;
    }
    case 'jobs':
      return jobs(args);
    case 'mcp': {
      const apiKey = process.env.SIGNERY_API_KEY;
      if (!apiKey) {
        console.error('signery mcp needs the API key in SIGNERY_API_KEY (POST /api/key with agent: true).');
        return 2;
      }
      const { bridgeStdioToHttp } = await import('./mcp/stdio-bridge.js');
      await bridgeStdioToHttp({ url: process.env.SIGNERY_URL ?? loadConfig().publicUrl, apiKey });
      return -1;
    }
    case '--version':
    case '-v':
    case 'version':
      console.log(await version());
      return 0;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.log(USAGE);
      return 0;
    default:
      console.error(`Unknown command "${command}".\n\n${USAGE}`);
      return 2;
  }
}

/** `signery jobs list|retry|cancel`: see USAGE and docs/operations.md (The job queue). */
async function jobs(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  if (action !== 'list' && action !== 'retry' && action !== 'cancel')
    throw new InvalidArguments('jobs takes list, retry or cancel');
  const { narrows, parseAge, parseStates } = await import('./ops/jobs/job-selection.js');
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      type: { type: 'string', multiple: true, default: [] },
      state: { type: 'string', multiple: true, default: [] },
      'older-than': { type: 'string' },
      limit: { type: 'string', default: '100' },
      json: { type: 'boolean', default: false },
      all: { type: 'boolean', default: false },
    },
  });
  const olderThan = values['older-than'];
  const selection: JobSelection = {
    ids: positionals,
    types: values.type,
    states: parseStates(values.state),
    olderThanMs: olderThan === undefined ? undefined : parseAge(olderThan),
  };
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new InvalidArguments('--limit must be a positive integer');
  if (action !== 'list' && !narrows(selection) && !values.all)
    throw new InvalidArguments(`jobs ${action} needs job ids, --type, --state or --older-than (or --all)`);
  // No migration: an operator's look at the queue changes nothing else (`signery migrate` does that).
  const { openDatabase, pendingMigrations } = await databaseModules();
  const { systemClock } = await import('./base/clock.js');
  const { changeReport, jobTable } = await import('./ops/jobs/job-table.js');
  const database = await openDatabase(loadConfig());
  try {
    // A queue this release does not know the shape of (or none yet) is said so, not read as one.
    const pending = await pendingMigrations(database);
    if (pending.length > 0)
      throw new OperationFailed(
        `The database has not applied ${pending.length} migration${pending.length === 1 ? '' : 's'} of this release (from ${pending[0]}): start the server once with this release, or run signery migrate, then look at the jobs.`,
      );
    const now = systemClock.now();
    if (action === 'list') {
      const { listJobs } = await import('./ops/jobs/list-jobs.js');
      const { total, jobs: listed } = await listJobs({ db: database.db, selection, now, limit });
      console.log(
        values.json ? JSON.stringify({ total, jobs: listed }, null, 2) : jobTable(listed, total, now),
      );
      return 0;
    }
    const { Progress } = await import('./ops/progress.js');
    const change =
      action === 'retry'
        ? (await import('./ops/jobs/retry-jobs.js')).retryJobs
        : (await import('./ops/jobs/cancel-jobs.js')).cancelJobs;
    const result = await change({
      db: database.db,
      dialect: database.dialect,
      selection,
      now,
      progress: new Progress(),
    });
    console.log(
      values.json
        ? JSON.stringify(result, null, 2)
        : changeReport(action === 'retry' ? 'retried' : 'cancelled', result),
    );
    return result.leftAlone.length > 0 || result.unknown.length > 0 ? 1 : 0;
  } finally {
    await database.close();
  }
}

/** The database's opening and its migrations, which most commands need. */
async function databaseModules() {
  const [{ openDatabase }, { migrateToLatest, pendingMigrations }] = await Promise.all([
    import('./store/db/open-database.js'),
    import('./store/db/migrate.js'),
  ]);
  return { openDatabase, migrateToLatest, pendingMigrations };
}

/** This release's version, from the package.json beside src/ (or dist/). */
async function version(): Promise<string> {
  const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    if (
      error instanceof InvalidArguments ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      console.error(`${(error as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    if (error instanceof ConfigError) console.error(`Configuration error: ${error.message}`);
    else if (error instanceof OperationFailed) console.error(error.message);
    else console.error(error);
    process.exit(1);
  },
);

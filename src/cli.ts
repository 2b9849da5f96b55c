#!/usr/bin/env node
import { systemClock } from './clock.js';
import { ConfigError, loadConfig } from './config.js';
import { serve, work } from './main.js';
import { verifyAuditChain } from './audit/verify-chain.js';
import { migrateToLatest } from './store/db/migrate.js';
import { openDatabase } from './store/db/open-database.js';
import { bootstrapAdmin } from './users/bootstrap-admin.js';

const USAGE = `Usage: signery <command>

Commands:
  serve                         start the API server (same as npm start)
  worker                        run the job worker only, no HTTP (beside API nodes with JOB_WORKER=false)
  migrate                       apply pending database migrations and exit
  create-admin <name> [tenant]  create a super-administrator; the password is read from
                                ADMIN_PASSWORD or, when unset, from standard input
  audit verify                  recompute every tenant's audit hash chain; exits 1 and names the
                                first broken record of each tenant when one was changed or removed

Configuration comes from the environment variables listed in the README.`;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').trim();
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'serve':
      await serve();
      return -1;
    case 'worker':
      await work();
      return -1;
    case 'migrate': {
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
      const password = config.admin.password ?? (await readStdin());
      if (password.length < 8) {
        console.error('The password must have at least 8 characters (ADMIN_PASSWORD or standard input).');
        return 2;
      }
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
    case 'audit': {
      if (args[0] !== 'verify') {
        console.error(USAGE);
        return 2;
      }
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
    default:
      console.error(USAGE);
      return command === undefined || command === 'help' || command === '--help' ? 0 : 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
    process.exit(1);
  },
);

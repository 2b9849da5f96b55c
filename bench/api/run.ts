/**
 * API throughput benchmark: `npm run bench:api [-- --db sqlite|postgres] [options]`.
 * See bench/README.md for what it measures and how to read the figures.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, release, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { cpuSnapshot, cpuUsage, machineBusy } from './cpu.js';
import type { LoadRequest } from './autocannon.js';
import { runLoad, type LoadOptions } from './load.js';
import { cpuPinning, installExitHandlers, onCleanup, runCleanups, type Pinning } from './processes.js';
import {
  caseLine,
  isBroken,
  isNoisy,
  NOISE_LIMIT,
  othersOnServerCore,
  summaryTable,
  type DatabaseKind,
  type Measurement,
  type Target,
} from './report.js';
import { prepareReads, type ReadFixture } from './reads.js';
import { ADMIN, ensureBuilt, logIn, makeApiKeys, startServer, type RunningServer } from './server.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** The authenticated GET and GET /documents/:id (issue 26). */
const TARGETS: Record<DatabaseKind, Target> = {
  sqlite: { minRequestsPerSecond: 10_000, maxP99Ms: 20 },
  postgres: { minRequestsPerSecond: 5_000, maxP99Ms: 20 },
};

/** POST /search, a page of 20 (issue 26: a throughput only). */
const SEARCH_TARGETS: Record<DatabaseKind, Target> = {
  sqlite: { minRequestsPerSecond: 5_000 },
  postgres: { minRequestsPerSecond: 2_500 },
};

const CASE_IDS = [
  'healthz',
  'get',
  'document',
  'search',
  'login',
  'get-info',
  'document-info',
  'get-nolimit',
] as const;
type CaseId = (typeof CASE_IDS)[number];

const USAGE = `Usage: npm run bench:api -- [options]
  --db sqlite|postgres   only this database (default: sqlite, then postgres)
  --connections N        concurrent connections (default 50)
  --tokens N             the authenticated GET spreads its requests over N tokens of the administrator
                         (its session and N-1 API keys; default: one per connection), as many callers'
                         requests would arrive; the document and search cases over N tokens of the
                         integrator who made the documents
  --documents N          documents made before the document and search cases (default 200)
  --warmup S             warm-up seconds before each measurement (default 3)
  --seconds S            measured seconds for the GET cases (default 10)
  --login-seconds S      measured seconds for POST /login (default 5; argon2 makes it slow anyway)
  --case LIST            comma-separated subset of: ${CASE_IDS.join(', ')} (default: all)
  --quiet-wait S         before each case, wait up to S s for other processes to leave the CPUs
                         idle (default 0: only warn when they do not)
  --retry-noisy N        measure a case again, up to N times, when other processes took CPU 0
                         from the server (default 0); the least disturbed attempt is kept
  --priority             run server and load generator at nice -15 (root only): on a
                         shared machine, keeps other work from taking their cores
  --rebuild              run npm run build even when dist/ is newer than src/
  --root DIR             serve DIR/dist/main.js instead of this checkout's (to compare two builds)
Environment: BENCH_DATABASE_URL (default ${DEFAULT_POSTGRES_URL}).`;

interface Settings {
  databases: DatabaseKind[];
  cases: Set<CaseId>;
  /** The checkout whose dist/main.js is served. */
  serverRoot: string;
  explicitDatabase: boolean;
  connections: number;
  tokens: number | undefined;
  documents: number;
  warmup: number;
  seconds: number;
  loginSeconds: number;
  quietWait: number;
  retryNoisy: number;
  rebuild: boolean;
  priority: boolean;
  postgresUrl: string;
}

function positive(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`--${name} must be a positive integer`);
  return value;
}

function nonNegative(raw: string | undefined, name: string): number {
  if (raw === undefined) return 0;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new UsageError(`--${name} must be an integer ≥ 0`);
  return value;
}

class UsageError extends Error {}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      db: { type: 'string' },
      connections: { type: 'string' },
      tokens: { type: 'string' },
      documents: { type: 'string' },
      warmup: { type: 'string' },
      seconds: { type: 'string' },
      'login-seconds': { type: 'string' },
      case: { type: 'string' },
      rebuild: { type: 'boolean', default: false },
      priority: { type: 'boolean', default: false },
      'quiet-wait': { type: 'string' },
      'retry-noisy': { type: 'string' },
      root: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (values.db !== undefined && values.db !== 'sqlite' && values.db !== 'postgres') {
    throw new UsageError(`--db must be sqlite or postgres, not "${values.db}"`);
  }
  const cases = (values.case ?? CASE_IDS.join(',')).split(',').map((c) => c.trim());
  const unknown = cases.filter((c) => !(CASE_IDS as readonly string[]).includes(c));
  if (unknown.length > 0) throw new UsageError(`--case: unknown case(s) ${unknown.join(', ')}`);
  return {
    databases: values.db ? [values.db] : ['sqlite', 'postgres'],
    cases: new Set(cases as CaseId[]),
    serverRoot: values.root ? resolve(values.root) : ROOT,
    explicitDatabase: values.db !== undefined,
    connections: positive(values.connections, 'connections', 50),
    tokens: values.tokens === undefined ? undefined : positive(values.tokens, 'tokens', 1),
    documents: positive(values.documents, 'documents', 200),
    warmup: positive(values.warmup, 'warmup', 3),
    seconds: positive(values.seconds, 'seconds', 10),
    loginSeconds: positive(values['login-seconds'], 'login-seconds', 5),
    quietWait: nonNegative(values['quiet-wait'], 'quiet-wait'),
    retryNoisy: nonNegative(values['retry-noisy'], 'retry-noisy'),
    rebuild: values.rebuild ?? false,
    priority: values.priority ?? false,
    postgresUrl: process.env.BENCH_DATABASE_URL || DEFAULT_POSTGRES_URL,
  };
}

const started = Date.now();
function progress(message: string): void {
  const elapsed = String(Math.round((Date.now() - started) / 1000)).padStart(4);
  console.log(`[${elapsed} s] ${message}`);
}

function cpuModel(): string {
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('model name'));
    if (line) return line.split(':')[1]?.trim() ?? 'unknown';
  } catch {
    // Not Linux: os.cpus() below knows the model too, if less reliably inside containers.
  }
  return cpus()[0]?.model ?? 'unknown';
}

function describeMachine(pinning: Pinning): string {
  return [
    `machine: ${cpuModel()}, ${availableParallelism()} CPUs, ${Math.round(totalmem() / 2 ** 30)} GiB, Linux ${release()}, Node ${process.version}`,
    pinning.pinned
      ? 'pinning: server on CPU 0 (taskset -c 0), load generator on CPU 1 (taskset -c 1)'
      : 'pinning: NONE; figures are not comparable with pinned runs',
    ...(pinning.niceness !== undefined
      ? [`priority: server and load generator at nice ${pinning.niceness} (--priority)`]
      : []),
    ...pinning.notes.map((note) => `note: ${note}`),
  ].join('\n');
}

/** Connects once to see whether PostgreSQL answers; the reason is returned rather than thrown. */
async function postgresVersion(url: string): Promise<{ version: string } | { unreachable: string }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    const result = await client.query<{ server_version: string }>('show server_version');
    return { version: result.rows[0]?.server_version ?? 'unknown' };
  } catch (error) {
    return { unreachable: error instanceof Error ? error.message : String(error) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

function describeBusy(busy: number[]): string {
  return busy.map((b, cpu) => `CPU ${cpu} ${Math.round(b * 100)}%`).join(', ');
}

/**
 * Checks, while the server is idle, that nothing else is using the CPUs; with --quiet-wait, waits
 * for that (on a shared machine, a test run next door halves the figures).
 */
async function awaitQuiet(maxSeconds: number, raisedPriority: boolean): Promise<void> {
  const deadline = Date.now() + maxSeconds * 1000;
  let busy = await machineBusy();
  if (!busy || busy.every((b) => b <= NOISE_LIMIT)) return;
  if (maxSeconds > 0) {
    progress(`  other processes are busy (${describeBusy(busy)}): waiting up to ${maxSeconds} s for quiet`);
    while (Date.now() < deadline) {
      busy = (await machineBusy(2_000)) ?? [];
      if (busy.every((b) => b <= NOISE_LIMIT)) return;
    }
  }
  progress(
    raisedPriority
      ? `  other processes are busy (${describeBusy(busy)}): running at raised priority (see "others on CPU 0")`
      : `  WARNING: other processes are busy (${describeBusy(busy)}): figures will be low and noisy (see --priority)`,
  );
}

/** What the cases' requests are made of: the administrator's tokens, and the documents to read. */
interface Fixture {
  tokens: string[];
  /** Made only when a read case (document, search) is measured. */
  reads: ReadFixture | undefined;
}

interface BenchCase {
  id: CaseId;
  name: string;
  method: 'GET' | 'POST';
  /** The requests the connections go through, each connection from its own offset. */
  requests: (fixture: Fixture) => LoadRequest[];
  /** A text every answer's body must contain. */
  expect?: string;
  seconds: number;
  target: Target | undefined;
}

/** The fixture's documents, for the cases that read them. */
function readsOf(fixture: Fixture): ReadFixture {
  if (!fixture.reads) throw new Error('the documents of the read cases were not made');
  return fixture.reads;
}

async function measure(
  settings: Settings,
  pinning: Pinning,
  server: RunningServer,
  database: DatabaseKind,
  logLevel: string,
  benchCase: BenchCase,
  fixture: Fixture,
): Promise<Measurement> {
  const load: LoadOptions = {
    root: ROOT,
    placement: pinning.load,
    origin: server.baseUrl,
    requests: benchCase.requests(fixture),
    ...(benchCase.expect !== undefined ? { expect: benchCase.expect } : {}),
    connections: settings.connections,
    seconds: settings.warmup,
    method: benchCase.method,
  };
  const attempts = 1 + settings.retryNoisy;
  let best: Measurement | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const again = attempt > 1 ? ` (attempt ${attempt}/${attempts})` : '';
    await awaitQuiet(settings.quietWait, pinning.niceness !== undefined);
    // The first seconds run cold code (V8 has not optimised the hot paths yet, pools are filling):
    // a separate, discarded run keeps them out of the figures.
    progress(`  ${database}: ${benchCase.name}: warm-up ${settings.warmup} s${again}`);
    await runLoad(load);
    progress(
      `  ${database}: ${benchCase.name}: measuring ${benchCase.seconds} s at ${settings.connections} connections${again}`,
    );
    const withPostgres = database === 'postgres';
    const before = cpuSnapshot(server.pid, withPostgres);
    const result = await runLoad({ ...load, seconds: benchCase.seconds });
    const cpu = cpuUsage(before, cpuSnapshot(server.pid, withPostgres));
    const measurement: Measurement = {
      database,
      caseName: benchCase.name,
      logLevel,
      result,
      target: benchCase.target,
      cpu,
      pinned: pinning.pinned,
    };
    console.log(`  → ${caseLine(measurement)}`);
    if (isBroken(measurement)) {
      console.log(`    server log (last lines):\n${indent(server.logTail(10))}`);
      return measurement;
    }
    // Of several disturbed attempts, the least disturbed says the most about the server.
    if (!best || (othersOnServerCore(measurement) ?? 0) < (othersOnServerCore(best) ?? 0)) best = measurement;
    if (!isNoisy(measurement)) break;
    if (attempt < attempts) progress(`  NOISY: other processes shared CPU 0; measuring again`);
  }
  return best!;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `      ${line}`)
    .join('\n');
}

/** One server start: log in, then measure each case against it, stopping the server whatever happens. */
async function withServer(
  settings: Settings,
  pinning: Pinning,
  database: DatabaseKind,
  logLevel: 'warn' | 'info',
  cases: BenchCase[],
  postgres: { url: string; schema: string } | undefined,
  into: Measurement[],
  rateLimit: 'on' | 'off' = 'on',
): Promise<void> {
  progress(
    `${database}: starting the server (LOG_LEVEL=${logLevel}${rateLimit === 'off' ? ', RATE_LIMIT=off' : ''}${postgres ? `, schema ${postgres.schema}` : ''})`,
  );
  const server = await startServer({
    root: settings.serverRoot,
    placement: pinning.server,
    logLevel,
    databaseUrl: postgres?.url,
    databaseSchema: postgres?.schema,
    rateLimit,
  });
  try {
    progress(`${database}: server up at ${server.baseUrl}; logging in once for a token`);
    const token = await logIn(server.baseUrl);
    const count = settings.tokens ?? settings.connections;
    progress(`${database}: making ${count - 1} API keys, for ${count} tokens in all`);
    const tokens = [token, ...(await makeApiKeys(server.baseUrl, token, count - 1))];
    let reads: ReadFixture | undefined;
    if (cases.some((c) => c.id === 'document' || c.id === 'search')) {
      progress(`${database}: making ${settings.documents} documents and ${count} tokens of an integrator`);
      reads = await prepareReads(server.baseUrl, token, { documents: settings.documents, tokens: count });
    }
    for (const benchCase of cases) {
      into.push(await measure(settings, pinning, server, database, logLevel, benchCase, { tokens, reads }));
    }
  } catch (error) {
    console.error(`    server log (last lines):\n${indent(server.logTail(20))}`);
    throw error;
  } finally {
    progress(`${database}: stopping the server`);
    await server.stop();
  }
}

/** The cases run against a LOG_LEVEL=warn server, in order, as far as --case selects them. */
function casesFor(database: DatabaseKind, settings: Settings): BenchCase[] {
  const all: BenchCase[] = [
    {
      id: 'healthz',
      name: 'GET /healthz (ceiling)',
      method: 'GET',
      requests: () => [{ path: '/healthz' }],
      seconds: settings.seconds,
      target: undefined,
    },
    authenticatedGet(database, settings),
    documentRead(database, settings),
    {
      id: 'search',
      name: 'POST /search, page of 20',
      method: 'POST',
      requests: (fixture) => readsOf(fixture).search,
      seconds: settings.seconds,
      target: SEARCH_TARGETS[database],
    },
    {
      id: 'login',
      name: 'POST /login',
      method: 'POST',
      requests: () => [{ path: '/api/v1/login', body: JSON.stringify(ADMIN) }],
      seconds: settings.loginSeconds,
      target: undefined,
    },
  ];
  return all.filter((c) => settings.cases.has(c.id));
}

function documentRead(database: DatabaseKind, settings: Settings): BenchCase {
  return {
    id: 'document',
    name: 'GET /documents/:id',
    method: 'GET',
    // Document i with the integrator's token i: every answer must be that document, byte for byte.
    requests: (fixture) => readsOf(fixture).documents,
    seconds: settings.seconds,
    target: TARGETS[database],
  };
}

function authenticatedGet(database: DatabaseKind, settings: Settings): BenchCase {
  return {
    id: 'get',
    name: 'authenticated GET',
    method: 'GET',
    requests: ({ tokens }) =>
      tokens.map((token) => ({ path: `/api/v1/login?token=${encodeURIComponent(token)}` })),
    // GET /login answers 200 {logged:false} to a token it did not accept: the body tells.
    expect: '"logged":true',
    seconds: settings.seconds,
    target: TARGETS[database],
  };
}

/** Runs `run` on a new PostgreSQL schema, dropped afterwards (and on Ctrl-C or a failure). */
async function onFreshSchema(url: string, run: (schema: string) => Promise<void>): Promise<void> {
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const forget = onCleanup(() => dropSchema(url, schema));
  try {
    await run(schema);
  } finally {
    forget();
    progress(`postgres: dropping schema ${schema}`);
    await dropSchema(url, schema).catch((error: unknown) =>
      console.error(`could not drop schema ${schema}: ${String(error)}`),
    );
  }
}

async function benchDatabase(
  database: DatabaseKind,
  settings: Settings,
  pinning: Pinning,
  into: Measurement[],
): Promise<'done' | 'skipped'> {
  const cases = casesFor(database, settings);
  if (database === 'sqlite') {
    if (cases.length > 0) await withServer(settings, pinning, 'sqlite', 'warn', cases, undefined, into);
    // The default LOG_LEVEL is info, which writes a line per request: measured once so its cost shows.
    const infoCases = [
      ...(settings.cases.has('get-info') ? [authenticatedGet('sqlite', settings)] : []),
      // The issue's figures are of `npm start` as shipped: the call integrators poll, at that level too.
      ...(settings.cases.has('document-info') ? [documentRead('sqlite', settings)] : []),
    ];
    if (infoCases.length > 0)
      await withServer(settings, pinning, 'sqlite', 'info', infoCases, undefined, into);
    // Every other case runs with the rate limiter counting (limits no case reaches): once without
    // it, so that what it costs shows.
    if (settings.cases.has('get-nolimit')) {
      const unlimited = {
        ...authenticatedGet('sqlite', settings),
        name: 'authenticated GET, RATE_LIMIT=off',
      };
      await withServer(settings, pinning, 'sqlite', 'warn', [unlimited], undefined, into, 'off');
    }
    return 'done';
  }
  const infoCases = settings.cases.has('document-info') ? [documentRead('postgres', settings)] : [];
  if (cases.length === 0 && infoCases.length === 0) return 'done';
  const url = settings.postgresUrl;
  const reachable = await postgresVersion(url);
  if ('unreachable' in reachable) {
    console.log(`postgres: SKIPPED: PostgreSQL is unreachable at ${url} (${reachable.unreachable}).`);
    console.log('          Start it, or point BENCH_DATABASE_URL at one, to measure PostgreSQL too.');
    return 'skipped';
  }
  progress(`postgres: PostgreSQL ${reachable.version} at ${url}`);
  if (cases.length > 0)
    await onFreshSchema(url, (schema) =>
      withServer(settings, pinning, 'postgres', 'warn', cases, { url, schema }, into),
    );
  // A server of its own at LOG_LEVEL=info, on a schema of its own.
  if (infoCases.length > 0)
    await onFreshSchema(url, (schema) =>
      withServer(settings, pinning, 'postgres', 'info', infoCases, { url, schema }, into),
    );
  return 'done';
}

async function main(): Promise<number> {
  installExitHandlers();
  let settings: Settings;
  try {
    settings = readSettings();
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const pinning = cpuPinning(settings.priority);
  console.log(describeMachine(pinning));
  console.log(
    `load: autocannon, ${settings.connections} connections, ${settings.warmup} s warm-up then ` +
      `${settings.seconds} s measured (POST /login: ${settings.loginSeconds} s)`,
  );
  progress('build: checking dist/');
  if (settings.serverRoot !== ROOT) console.log(`server: ${settings.serverRoot}/dist/main.js (--root)`);
  await ensureBuilt(settings.serverRoot, settings.rebuild);

  const measurements: Measurement[] = [];
  const failures: string[] = [];
  for (const database of settings.databases) {
    try {
      const outcome = await benchDatabase(database, settings, pinning, measurements);
      if (outcome === 'skipped' && settings.explicitDatabase)
        failures.push(`${database}: skipped (unreachable)`);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      console.error(`${database}: FAILED: ${message}`);
      failures.push(`${database}: ${message}`);
    }
  }

  console.log(
    '\nSummary (targets are aims, not assertions; BROKEN = errors, non-2xx answers or bodies without the expected text):\n',
  );
  console.log(measurements.length > 0 ? summaryTable(measurements) : '(nothing measured)');
  const noisy = measurements.filter(isNoisy);
  if (noisy.length > 0) {
    console.log(
      `\nWARNING: other processes took more than ${NOISE_LIMIT * 100}% of CPU 0 during ${noisy.length} case(s) ` +
        '(NOISY above): their req/s and latencies understate the server; CPU µs/req is less affected but inflated too.',
    );
  }
  const broken = measurements.filter(isBroken);
  for (const m of broken)
    failures.push(`${m.database} ${m.caseName}: ${m.result.non2xx} non-2xx, ${m.result.errors} errors`);
  if (failures.length > 0) {
    console.log(`\nFAILED:\n${failures.map((f) => `  - ${f}`).join('\n')}`);
    return 1;
  }
  console.log(`\nAll cases answered 2xx without errors (${Math.round((Date.now() - started) / 1000)} s).`);
  return 0;
}

void main()
  .catch((error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    return 1;
  })
  // Explicit exit: fetch keeps idle keep-alive sockets that would otherwise hold the process open.
  .then(async (code) => {
    await runCleanups();
    process.exit(code);
  });

/**
 * Webhook delivery benchmark: `npm run bench:webhooks [-- --db sqlite|postgres] [options]`.
 *
 * Builds the app in this process, points organization webhooks at a receiver on loopback (a child
 * process, receiver.ts), and
 * emits events the way document changes do (one transaction each, through emitEvent). Three
 * measurements per database:
 * - emit: a backlog of events written as fast as possible, no worker running (events/s written);
 * - delivery throughput: a worker started on that backlog; events delivered per second until the
 *   last one arrives;
 * - latency: events emitted at a steady rate while the worker runs; the delay from each event's
 *   time (its `timestamp`) to its arrival at the receiver, p50 and p99.
 * The machine's load average is printed with the figures: on a shared machine they move with it.
 * Targets (PostgreSQL): at least 1,000 events/s, p99 under 1 s. Never asserted by tests.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/base/config.js';
import { Worker } from '../../src/jobs/worker.js';
import { writeTransaction } from '../../src/store/db/dialect.js';
import { emitEvent } from '../../src/core/events/emit-event.js';
import { registerWebhookJobs } from '../../src/webhooks/webhook-jobs.js';
import { allPostgresTicks, cpuBusyTicks, TICKS_PER_SECOND } from '../api/cpu.js';
import type { ReceiverMessage } from './receiver.js';

type DatabaseKind = 'sqlite' | 'postgres';
const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const TARGET = { eventsPerSecond: 1_000, p99Ms: 1_000 };

const USAGE = `Usage: npm run bench:webhooks -- [options]
  --db sqlite|postgres   only this database (default: sqlite, then postgres)
  --events N             events in the backlog drained for throughput (default 5000)
  --webhooks N           organizations, one webhook each; events spread over them (default 16)
  --rate N               events per second in the latency run (default 1000, the target)
  --seconds S            length of the latency run (default 5)
  --concurrency N        deliveries a worker runs at once (default 32)
  --worker inline|node   inline (default): one process emits and delivers, as one node (the API and its
                         worker) does; node: a worker-only node (\`signery worker\`, a child process)
                         delivers while this process emits as an API node with JOB_WORKER=false would
                         (PostgreSQL wakes it with NOTIFY; on SQLite it finds jobs by polling)
  --cpu-prof-dir DIR     with --worker node: the worker node writes a V8 CPU profile into DIR
Environment: BENCH_DATABASE_URL (default ${DEFAULT_POSTGRES_URL}).`;

interface Settings {
  databases: DatabaseKind[];
  events: number;
  webhooks: number;
  rate: number;
  seconds: number;
  concurrency: number;
  worker: 'node' | 'inline' | undefined;
  /** With --worker node: the worker node writes a V8 CPU profile (.cpuprofile) into this directory. */
  cpuProfileDir: string | undefined;
  postgresUrl: string;
}

function positive(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`--${name} must be a positive integer\n\n${USAGE}`);
    process.exit(2);
  }
  return value;
}

function readSettings(): Settings {
  const { values } = parseArgs({
    options: {
      db: { type: 'string' },
      events: { type: 'string' },
      webhooks: { type: 'string' },
      rate: { type: 'string' },
      seconds: { type: 'string' },
      concurrency: { type: 'string' },
      worker: { type: 'string' },
      'cpu-prof-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  if (values.db !== undefined && values.db !== 'sqlite' && values.db !== 'postgres') {
    console.error(`--db must be sqlite or postgres\n\n${USAGE}`);
    process.exit(2);
  }
  if (values.worker !== undefined && values.worker !== 'node' && values.worker !== 'inline') {
    console.error(`--worker must be node or inline\n\n${USAGE}`);
    process.exit(2);
  }
  return {
    databases: values.db ? [values.db] : ['sqlite', 'postgres'],
    events: positive(values.events, 'events', 5_000),
    webhooks: positive(values.webhooks, 'webhooks', 16),
    rate: positive(values.rate, 'rate', 1_000),
    seconds: positive(values.seconds, 'seconds', 5),
    concurrency: positive(values.concurrency, 'concurrency', 32),
    worker: values.worker,
    cpuProfileDir: values['cpu-prof-dir'],
    postgresUrl: process.env.BENCH_DATABASE_URL ?? DEFAULT_POSTGRES_URL,
  };
}

/**
 * The receiver (receiver.ts) in a child process: counts distinct deliveries and the delay of each
 * from its event's timestamp, as the child reports them.
 */
class Receiver {
  readonly delays: number[] = [];
  delivered = 0;
  duplicates = 0;
  url = '';
  #child: ChildProcess | undefined;
  #onDelivery: (() => void) | undefined;

  async start(): Promise<void> {
    const child = fork(fileURLToPath(new URL('./receiver.ts', import.meta.url)), {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.#child = child;
    this.url = await new Promise<string>((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code) => reject(new Error(`the receiver exited (${code})`)));
      child.on('message', (message: ReceiverMessage) => {
        if (message.type === 'listening') resolve(message.url);
        else {
          for (const delay of message.delays) this.delays.push(delay);
          this.delivered += message.delays.length;
          this.duplicates += message.duplicates;
          this.#onDelivery?.();
        }
      });
    });
  }

  reset(): void {
    this.delays.length = 0;
    this.delivered = 0;
    this.duplicates = 0;
  }

  /** Resolves when `count` distinct deliveries have arrived, printing progress. */
  waitFor(count: number, label: string): Promise<void> {
    // One line rewritten in a terminal; a line every few seconds in a log.
    const tty = process.stdout.isTTY;
    const print = (final: boolean) => {
      const line = `  ${label}: ${this.delivered}/${count} delivered`;
      if (tty) process.stdout.write(`\r${line}   ${final ? '\n' : ''}`);
      else console.log(line);
    };
    return new Promise((resolve) => {
      let lastPrint = Date.now();
      const check = () => {
        if (this.delivered >= count) {
          print(true);
          this.#onDelivery = undefined;
          resolve();
        } else if (Date.now() - lastPrint > (tty ? 500 : 3_000)) {
          lastPrint = Date.now();
          print(false);
        }
      };
      this.#onDelivery = check;
      check();
    });
  }

  close(): void {
    this.#child?.removeAllListeners('exit');
    this.#child?.disconnect();
  }
}

/** CPU time of every PostgreSQL process so far, in ms; NaN for SQLite or without /proc. */
function postgresCpuMs(kind: DatabaseKind): number {
  if (kind !== 'postgres') return Number.NaN;
  try {
    return (allPostgresTicks() * 1000) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** ", x ms CPU per event (who)", or nothing when it could not be measured. */
function perEvent(cpuMs: number, events: number, who: string): string {
  return Number.isFinite(cpuMs) ? `, ${(cpuMs / events).toFixed(2)} ms (${who})` : '';
}

/** The machine's busy CPU time so far (all cores, every process), in ms; NaN without /proc. */
function machineBusyMs(): number {
  try {
    return (cpuBusyTicks().reduce((sum, ticks) => sum + ticks, 0) * 1000) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

interface Result {
  database: DatabaseKind;
  emittedPerSecond: number;
  eventsPerSecond: number;
  rate: number;
  p50: number;
  p99: number;
  duplicates: number;
}

async function setUp(
  kind: DatabaseKind,
  settings: Settings,
): Promise<{ app: App; env: Record<string, string>; cleanup: () => Promise<void> }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'signery-bench-webhooks-'));
  const schema = kind === 'postgres' ? `bench_${randomBytes(5).toString('hex')}` : undefined;
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
    JOB_CONCURRENCY: String(settings.concurrency),
    ...(schema ? { DATABASE_URL: settings.postgresUrl, DATABASE_SCHEMA: schema } : {}),
  };
  // The worker is started by the benchmark once the backlog is written.
  const app = await buildApp(loadConfig(env), { logger: false, worker: false });
  const cleanup = async () => {
    await app.close();
    await rm(dataDir, { recursive: true, force: true });
    if (schema) {
      const client = new pg.Client({ connectionString: settings.postgresUrl });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    }
  };
  return { app, env, cleanup };
}

/** Who delivers: a worker in this process, or a worker-only node in a child process. */
interface Deliverer {
  readonly layout: string;
  start(): Promise<void>;
  /** CPU time (user + system) the delivering process has used so far, in ms; NaN when unknown. */
  cpuMs(): number;
  stop(): Promise<void>;
}

function inlineDeliverer(app: App, concurrency: number): Deliverer {
  const worker = new Worker(app.deps, { concurrency, wakeUps: app.database.listenForJobs });
  registerWebhookJobs(worker, app.deps);
  return {
    layout: 'this process emits and delivers (one node: the API and its worker)',
    start: async () => worker.start(),
    cpuMs: () => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1000;
    },
    stop: () => worker.stop(),
  };
}

const CLI = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

/** `signery worker` in a child process, on the benchmark's database; woken by NOTIFY on PostgreSQL. */
function nodeDeliverer(env: Record<string, string>, cpuProfileDir: string | undefined): Deliverer {
  let child: ChildProcess | undefined;
  return {
    layout: 'this process emits as an API node (JOB_WORKER=false) would; a `signery worker` node delivers',
    async start() {
      const started = spawn(
        process.execPath,
        [
          ...(cpuProfileDir ? ['--cpu-prof', '--cpu-prof-dir', cpuProfileDir] : []),
          '--import',
          'tsx',
          CLI,
          'worker',
        ],
        {
          env: { ...process.env, ...env, LOG_LEVEL: 'info' },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      child = started;
      await new Promise<void>((resolve, reject) => {
        started.once('exit', (code) => reject(new Error(`signery worker exited (${code})`)));
        let output = '';
        let ready = false;
        // Its log lines are read until it says it started, then dropped (the pipe must not fill).
        started.stdout?.on('data', (chunk: Buffer) => {
          if (ready) return;
          output += chunk.toString('utf8');
          ready = output.includes('job worker started');
          if (ready) resolve();
        });
      });
    },
    cpuMs() {
      try {
        // Fields 14 and 15 of /proc/<pid>/stat: user and system time in clock ticks (100 per second).
        const stat = readFileSync(`/proc/${child?.pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return (Number(fields[11]) + Number(fields[12])) * 10;
      } catch {
        return Number.NaN;
      }
    },
    async stop() {
      if (!child || child.exitCode !== null) return;
      child.removeAllListeners('exit');
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Organizations with one webhook each, written directly (no administrator needed for a benchmark). */
async function createWebhooks(
  app: App,
  count: number,
  callbackUrl: string,
): Promise<{ tenantId: string; organizationId: string }[]> {
  const { db } = app.deps;
  const tenant = await db.selectFrom('tenants').select('id').executeTakeFirstOrThrow();
  const now = new Date().toISOString();
  const scopes: { tenantId: string; organizationId: string }[] = [];
  for (let i = 0; i < count; i++) {
    const organizationId = randomUUID();
    await db
      .insertInto('organizations')
      .values({ id: organizationId, tenant_id: tenant.id, name: `bench-${i}`, created_at: now })
      .execute();
    await db
      .insertInto('webhooks')
      .values({
        id: randomUUID(),
        tenant_id: tenant.id,
        type: 'organization',
        organization_id: organizationId,
        name: organizationId,
        callback_url: callbackUrl,
        hmac_secret: randomBytes(32).toString('hex'),
        creator_id: 'bench',
        creator_name: 'bench',
        created_at: now,
      })
      .execute();
    scopes.push({ tenantId: tenant.id, organizationId });
  }
  return scopes;
}

function emitOne(app: App, scope: { tenantId: string; organizationId: string }, n: number): Promise<unknown> {
  const { db, dialect } = app.deps;
  return writeTransaction(db, dialect, (trx) =>
    emitEvent(trx, {
      ...scope,
      documentId: `bench-${n}`,
      event: 'documentEdited',
      actor: 'bench',
      at: new Date(),
    }),
  );
}

async function measure(kind: DatabaseKind, settings: Settings): Promise<Result> {
  console.log(`\n${kind}: ${settings.webhooks} webhooks, worker concurrency ${settings.concurrency}`);
  const receiver = new Receiver();
  await receiver.start();
  const { app, env, cleanup } = await setUp(kind, settings);
  const deliverer =
    settings.worker === 'node'
      ? nodeDeliverer(env, settings.cpuProfileDir)
      : inlineDeliverer(app, settings.concurrency);
  console.log(`  ${deliverer.layout}`);
  try {
    const scopes = await createWebhooks(app, settings.webhooks, receiver.url);
    const scopeOf = (n: number) => scopes[n % scopes.length]!;

    // The backlog, with a few transactions in flight (PostgreSQL runs them side by side; SQLite
    // serialises them on its one connection).
    let started = Date.now();
    const emitCpuBefore = process.cpuUsage();
    const emitPostgresBefore = postgresCpuMs(kind);
    let next = 0;
    let lastPrint = Date.now();
    const emitters = Array.from({ length: 8 }, async () => {
      while (next < settings.events) {
        const n = next++;
        await emitOne(app, scopeOf(n), n);
        if (Date.now() - lastPrint > 3_000) {
          lastPrint = Date.now();
          console.log(`  emitting: ${n}/${settings.events}`);
        }
      }
    });
    await Promise.all(emitters);
    const emittedPerSecond = settings.events / ((Date.now() - started) / 1000);
    const emitCpu = process.cpuUsage(emitCpuBefore);
    const emitCpuMs = (emitCpu.user + emitCpu.system) / 1000 / settings.events;
    console.log(
      `  emit: ${settings.events} events written at ${Math.round(emittedPerSecond)} events/s, ${emitCpuMs.toFixed(2)} ms CPU per event (this process)${perEvent(postgresCpuMs(kind) - emitPostgresBefore, settings.events, 'PostgreSQL')}`,
    );

    const delivered = receiver.waitFor(settings.events, 'backlog');
    await deliverer.start();
    started = Date.now();
    const cpuBefore = deliverer.cpuMs();
    const deliveryPostgresBefore = postgresCpuMs(kind);
    await delivered;
    const eventsPerSecond = settings.events / ((Date.now() - started) / 1000);
    // CPU time of the delivering process (the worker and its HTTP client) per delivered event:
    // unlike the rate, it hardly moves with what else runs on the machine.
    const cpuMsPerEvent = (deliverer.cpuMs() - cpuBefore) / settings.events;
    console.log(
      `  delivery: the backlog went out at ${Math.round(eventsPerSecond)} events/s, ${cpuMsPerEvent.toFixed(2)} ms CPU per event (the delivering process)${perEvent(postgresCpuMs(kind) - deliveryPostgresBefore, settings.events, 'PostgreSQL')}`,
    );
    const burstDuplicates = receiver.duplicates;

    // Latency: a steady rate, one batch every 10 ms.
    receiver.reset();
    const total = settings.rate * settings.seconds;
    const arrived = receiver.waitFor(total, `steady ${settings.rate}/s`);
    const steadyStarted = performance.now();
    const busyBefore = machineBusyMs();
    const perTick = settings.rate / 100;
    let sent = 0;
    let owed = 0;
    const pending: Promise<unknown>[] = [];
    // How long each emitting transaction took, from its start to its commit.
    const commitDelays: number[] = [];
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        owed += perTick;
        while (owed >= 1 && sent < total) {
          owed -= 1;
          const n = settings.events + sent++;
          const began = performance.now();
          pending.push(emitOne(app, scopeOf(n), n).then(() => commitDelays.push(performance.now() - began)));
        }
        if (sent >= total) {
          clearInterval(timer);
          resolve();
        }
      }, 10);
    });
    await Promise.all(pending);
    await arrived;
    const steadyMs = performance.now() - steadyStarted;
    const busyMs = machineBusyMs() - busyBefore;
    const result: Result = {
      database: kind,
      emittedPerSecond,
      eventsPerSecond,
      rate: settings.rate,
      p50: percentile(receiver.delays, 50),
      p99: percentile(receiver.delays, 99),
      duplicates: burstDuplicates + receiver.duplicates,
    };
    console.log(
      `  steady ${settings.rate}/s: delay from emit to delivery p50 ${result.p50} ms, p99 ${result.p99} ms; emitting transactions took p50 ${percentile(commitDelays, 50).toFixed(1)} ms, p99 ${percentile(commitDelays, 99).toFixed(1)} ms`,
    );
    if (Number.isFinite(busyMs))
      console.log(
        `  steady ${settings.rate}/s: the machine was ${Math.round((busyMs / steadyMs / cpus().length) * 100)} % busy (all ${cpus().length} CPUs, every process), ${(busyMs / total).toFixed(2)} ms of CPU per event`,
      );
    return result;
  } finally {
    await deliverer.stop();
    await cleanup();
    receiver.close();
  }
}

async function main(): Promise<void> {
  const settings = readSettings();
  console.log(
    `webhook delivery benchmark — Node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()[0]?.toFixed(1)}; the receiver runs in a process of its own`,
  );
  const results: Result[] = [];
  for (const kind of settings.databases) {
    try {
      results.push(await measure(kind, settings));
    } catch (error) {
      console.error(`  ${kind}: failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    }
  }
  console.log(`\nload average at the end: ${loadavg()[0]?.toFixed(1)}`);
  console.log(
    '| database | emitted/s | delivered/s | steady rate | p50 delay | p99 delay | duplicates | target (PostgreSQL) |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    const met = r.eventsPerSecond >= TARGET.eventsPerSecond && r.p99 < TARGET.p99Ms ? 'met' : 'missed';
    console.log(
      `| ${r.database} | ${Math.round(r.emittedPerSecond)} | ${Math.round(r.eventsPerSecond)} | ${r.rate}/s | ${r.p50} ms | ${r.p99} ms | ${r.duplicates} | ${r.database === 'postgres' ? `≥ ${TARGET.eventsPerSecond}/s, p99 < ${TARGET.p99Ms} ms: ${met}` : 'n/a'} |`,
    );
  }
}

await main();

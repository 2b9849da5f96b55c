/**
 * Reports benchmark: `npm run bench:reports [-- --db sqlite|postgres] [--documents N] [--size N]`.
 *
 * Builds the app in this process on a fresh SQLite file or PostgreSQL schema, writes N documents
 * (default 100,000) straight into the store (one creation time each, share states cycling through
 * null, inprogress, completed, rejected, cancelled), then scrolls POST /search/reports over real HTTP,
 * one request at a time, in pages of `size` (default 100):
 * - all: every document, no filter;
 * - completed: the spec's state filter (nested workflow term shareStateName), a fifth of them;
 * - creator: the spec's creator filter (nested createName term createName.name), all of them.
 * For each it prints the opening request (which also counts the total), then p50/p99/max of the
 * continuation pages overall, of the first ten and of the last ten pages.
 * Target (issue 7): p99 < 50 ms for a page of 100, the same on the last page as on the first.
 * Never asserted by tests.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/base/config.js';
import { generateDocuments } from '../../test/fixtures/generate-documents.js';

type DatabaseKind = 'sqlite' | 'postgres';
const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
const TARGET_P99_MS = 50;
const ADMIN = { name: 'bench-admin@example.com', password: 'bench-password-0123456789' };

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    documents: { type: 'string', default: '100000' },
    size: { type: 'string', default: '100' },
  },
});
const databases: DatabaseKind[] =
  values.db === 'sqlite' || values.db === 'postgres' ? [values.db] : ['sqlite', 'postgres'];
const documents = Number(values.documents);
const size = Number(values.size);
const postgresUrl = process.env.BENCH_DATABASE_URL ?? DEFAULT_POSTGRES_URL;

interface Stats {
  p50: number;
  p99: number;
  max: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1) ?? 0 };
}

const ms = (n: number) => n.toFixed(1).padStart(6);

interface ReportsPage {
  total: number;
  results: unknown[];
  scrollId: string;
}

async function post(url: string, token: string, body: unknown): Promise<{ ms: number; body: ReportsPage }> {
  const started = performance.now();
  const response = await fetch(`${url}?token=${token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const elapsed = performance.now() - started;
  if (response.status !== 200) throw new Error(`${response.status} ${text}`);
  return { ms: elapsed, body: JSON.parse(text) as ReportsPage };
}

async function scroll(
  base: string,
  token: string,
  esFilters: unknown,
): Promise<{ open: number; pages: number[]; visited: number; total: number }> {
  const url = `${base}/api/v1/search/reports`;
  const first = await post(url, token, { query: { esFilters, size, scroll: { timeout: 120 } } });
  const pages: number[] = [];
  let visited = first.body.results.length;
  let scrollId = first.body.scrollId;
  for (;;) {
    const next = await post(url, token, { query: { esFilters, size, scroll: { id: scrollId } } });
    if (next.body.results.length === 0) break;
    pages.push(next.ms);
    visited += next.body.results.length;
    scrollId = next.body.scrollId;
  }
  return { open: first.ms, pages, visited, total: first.body.total };
}

async function runOn(kind: DatabaseKind): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'signery-bench-reports-'));
  const schema = kind === 'postgres' ? `bench_reports_${randomBytes(4).toString('hex')}` : undefined;
  let app: App | undefined;
  try {
    app = await buildApp(
      loadConfig({
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        ADMIN_EMAIL: ADMIN.name,
        ADMIN_PASSWORD: ADMIN.password,
        // Measured is the work, not the rate limits: one token makes every call.
        RATE_LIMIT: 'off',
        ...(schema ? { DATABASE_URL: postgresUrl, DATABASE_SCHEMA: schema } : {}),
      }),
      { logger: false, worker: false },
    );
    const base = (await app.server.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
    const login = await fetch(`${base}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    const token = ((await login.json()) as { token: string }).token;
    const admin = await app.deps.db
      .selectFrom('users')
      .select(['id', 'tenant_id', 'organization_id'])
      .where('name', '=', ADMIN.name)
      .executeTakeFirstOrThrow();

    const writing = performance.now();
    await generateDocuments(app.deps.db, {
      tenantId: admin.tenant_id,
      organizationId: admin.organization_id,
      ownerId: admin.id,
      count: documents,
    });
    // As autovacuum/ANALYZE would on a live database: the planner sees the table's real size.
    await sql`analyze`.execute(app.deps.db);
    console.log(
      `\n${kind}: ${documents.toLocaleString('en')} documents written in ${((performance.now() - writing) / 1000).toFixed(1)} s; pages of ${size}`,
    );
    console.log(
      'case        total  open ms | pages  p50 ms  p99 ms  max ms | first10 p99 | last10 p99 | target',
    );
    const cases: [string, unknown][] = [
      ['all', undefined],
      [
        'completed',
        {
          bool: {
            filter: [
              { nested: { path: 'workflow', query: { term: { 'workflow.shareStateName': 'completed' } } } },
            ],
          },
        },
      ],
      [
        'creator',
        {
          bool: {
            filter: [{ nested: { path: 'createName', query: { term: { 'createName.name': ADMIN.name } } } }],
          },
        },
      ],
    ];
    for (const [name, esFilters] of cases) {
      const run = await scroll(base, token, esFilters);
      if (run.visited !== run.total) throw new Error(`${name}: visited ${run.visited} of ${run.total}`);
      const all = stats(run.pages);
      const first = stats(run.pages.slice(0, 10));
      const last = stats(run.pages.slice(-10));
      const met = all.p99 < TARGET_P99_MS && first.p99 < TARGET_P99_MS && last.p99 < TARGET_P99_MS;
      console.log(
        `${name.padEnd(10)} ${String(run.total).padStart(6)} ${ms(run.open)}   | ${String(run.pages.length).padStart(5)} ${ms(all.p50)}  ${ms(all.p99)}  ${ms(all.max)} |    ${ms(first.p99)}   |   ${ms(last.p99)}   | ${met ? 'met' : 'MISSED'} (p99 < ${TARGET_P99_MS} ms)`,
      );
    }
  } finally {
    await app?.close();
    await rm(dataDir, { recursive: true, force: true });
    if (schema) {
      const client = new pg.Client({ connectionString: postgresUrl });
      await client.connect();
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    }
  }
}

console.log(
  `bench:reports on ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'}), load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
for (const kind of databases) await runOn(kind);

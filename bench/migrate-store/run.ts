/**
 * bench/migrate-store: how long `signery migrate-store` takes to copy and verify an installation of
 * 10,000 documents: `npm run bench:migrate-store [-- --documents 10000 --sealed 100 --data-dir DIR]`.
 * `--source DIR` keeps the source installation in DIR, and reuses it on the next run when it is there
 * (building one takes longer than migrating it).
 *
 * 1. Builds the source through the real code paths, over HTTP: the app on a fresh SQLite data
 *    directory (no job worker), `--documents` PDFs uploaded (8 at a time) and made into documents by
 *    POST /documents/bulk/create (100 per call), `--sealed` of them sealed (PUT /documents/seal/1).
 *    Not timed; its progress is shown. Then the app stops (the final run of a migration is made on a
 *    stopped source).
 * 2. Runs the built command (`node dist/cli.js migrate-store`, built when missing or older than
 *    src/) as an operator would, and times it from start to exit:
 *    - to PostgreSQL (127.0.0.1:5432, a fresh schema) and S3 (s3rver on loopback, `--blobs`);
 *    - again on that complete copy (what a resumed run costs when nothing is left to copy);
 *    - to PostgreSQL only, the blobs staying under DATA_DIR (the copy of the rows alone).
 *    Each run's phases are read from its progress lines: rows copied, blobs copied, rows verified,
 *    blobs hashed, and its total.
 * Never asserted by tests. Schemas, the bucket and the data directory are removed at the end.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/base/config.js';
import { forEachConcurrently } from '../../src/ops/concurrently.js';
import { Progress } from '../../src/ops/progress.js';
import { makePdf } from '../../test/helpers/pdf.js';
import { startS3rver } from '../../test/helpers/s3rver.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const ADMIN = { name: 'bench-admin@example.com', password: 'bench-password-0123456789' };
const { values } = parseArgs({
  options: {
    documents: { type: 'string', default: '10000' },
    sealed: { type: 'string', default: '100' },
    'data-dir': { type: 'string', default: tmpdir() },
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    source: { type: 'string' },
  },
});
const DOCUMENTS = Number(values.documents);
const SEALED = Math.min(Number(values.sealed), DOCUMENTS);
const POSTGRES = values.postgres;

/** Builds dist/ when it is missing or older than some file under src/. */
function ensureBuilt(): void {
  const newest = (dir: string): number =>
    Math.max(
      ...readdirSync(dir, { withFileTypes: true }).map((e) =>
        e.isDirectory() ? newest(join(dir, e.name)) : statSync(join(dir, e.name)).mtimeMs,
      ),
    );
  const cli = join(ROOT, 'dist', 'cli.js');
  if (existsSync(cli) && statSync(cli).mtimeMs > newest(join(ROOT, 'src'))) return;
  console.log('build: npm run build');
  const built = spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build failed');
}

/** The source installation: documents made through the API, some sealed. */
async function buildSource(dataDir: string): Promise<void> {
  const progress = new Progress();
  const config = loadConfig({
    DATA_DIR: dataDir,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_EMAIL: ADMIN.name,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'warn',
  });
  const app = await buildApp(config, { logger: false, worker: false });
  try {
    const base = `${await app.server.listen({ port: 0, host: '127.0.0.1' })}/api/v1`;
    const json = async (method: string, path: string, body: unknown) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return (await response.json()) as Record<string, unknown>;
    };
    const { token } = (await json('POST', '/login', ADMIN)) as { token: string };
    const uploads = progress.counter('source: PDFs uploaded', DOCUMENTS);
    const fileIds: string[] = new Array<string>(DOCUMENTS);
    await forEachConcurrently(
      Array.from({ length: DOCUMENTS }, (_, i) => i),
      8,
      async (i) => {
        const form = new FormData();
        const pdf = makePdf({ pages: 1 + (i % 3), lines: [`Contract ${i}`, randomBytes(8).toString('hex')] });
        form.append('file', new Blob([pdf], { type: 'application/pdf' }), `contract-${i}.pdf`);
        const response = await fetch(`${base}/files/saveFile?token=${token}`, { method: 'POST', body: form });
        if (!response.ok) throw new Error(`upload: ${response.status} ${await response.text()}`);
        fileIds[i] = ((await response.json()) as { file: { id: string } }).file.id;
        uploads.add();
      },
    );
    uploads.done();
    const created = progress.counter('source: documents created (bulk, 100 a call)', DOCUMENTS);
    const documentIds: string[] = [];
    for (let at = 0; at < DOCUMENTS; at += 100) {
      const batch = fileIds
        .slice(at, at + 100)
        .map((content, i) => ({ content, documentTitle: `Contract ${at + i}` }));
      const answer = (await json('POST', `/documents/bulk/create?token=${token}`, {
        body: {},
        bulkFiles: batch,
      })) as { results: { documentId: string }[] };
      documentIds.push(...answer.results.map((r) => r.documentId));
      created.add(batch.length);
    }
    created.done();
    const sealed = progress.counter('source: documents sealed', SEALED);
    for (const id of documentIds.slice(0, SEALED)) {
      await json('PUT', `/documents/seal/1?token=${token}`, { id, certificate: true });
      sealed.add();
    }
    sealed.done();
  } finally {
    await app.close();
  }
}

interface Run {
  label: string;
  totalS: number;
  phases: Record<string, string>;
  summary: string;
}

/** Runs `node dist/cli.js migrate-store …`, timing it and reading the times of its phases. */
async function migrate(label: string, args: string[], env: Record<string, string>): Promise<Run> {
  console.log(`\n== ${label}`);
  const started = performance.now();
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli.js'), 'migrate-store', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const phases: Record<string, string> = {};
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  createInterface({ input: child.stderr }).on('line', (line) => {
    process.stderr.write(`  ${line}\n`);
    const took = /\(([\d.]+ s|\d+ min \d+ s)\)$/.exec(line)?.[1];
    if (!took) return;
    if (line.startsWith('rows: ')) phases.rows = took;
    else if (line.startsWith('blobs: ')) phases.blobs = took;
    else if (line.startsWith('verify rows: ')) phases['verify rows'] = took;
    else if (line.startsWith('verify blobs')) phases['verify blobs'] = took;
  });
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (status !== 0) throw new Error(`${label}: migrate-store exited ${status}`);
  return {
    label,
    totalS: (performance.now() - started) / 1000,
    phases,
    summary: stdout.split('\n')[0] ?? '',
  };
}

async function main(): Promise<void> {
  ensureBuilt();
  const kept = values.source;
  const dataDir = kept ?? (await mkdtemp(join(values['data-dir'], 'signery-bench-migrate-')));
  const schemas = [
    `bench_ms_${randomBytes(4).toString('hex')}`,
    `bench_ms_${randomBytes(4).toString('hex')}`,
  ];
  const s3 = await startS3rver('bench-bucket');
  const admin = new pg.Client({ connectionString: POSTGRES });
  try {
    await admin.connect();
    console.log(
      `${DOCUMENTS.toLocaleString('en-US')} documents (${SEALED} sealed) on ${cpus().length}× ${cpus()[0]?.model ?? '?'}, load ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    if (kept && existsSync(join(kept, 'signery.db'))) console.log(`source: reusing ${kept}`);
    else await buildSource(dataDir);
    const { S3_BUCKET: _bucket, ...s3Settings } = s3.env;
    const env = { DATA_DIR: dataDir, ...s3Settings };
    const toS3 = ['--to', POSTGRES, '--schema', schemas[0]!, '--blobs', `s3://${s3.bucket}/signery`];
    const runs = [
      await migrate('to PostgreSQL and S3 (s3rver)', toS3, env),
      await migrate('again, on the complete copy', toS3, env),
      await migrate(
        'to PostgreSQL, blobs staying under DATA_DIR',
        ['--to', POSTGRES, '--schema', schemas[1]!],
        env,
      ),
    ];
    console.log(`\n${runs[0]!.summary}\n`);
    const columns = ['rows', 'blobs', 'verify rows', 'verify blobs'];
    console.log(['run', 'total (process)', ...columns].join(' | '));
    for (const run of runs) {
      console.log(
        [run.label, `${run.totalS.toFixed(1)} s`, ...columns.map((c) => run.phases[c] ?? '-')].join(' | '),
      );
    }
  } finally {
    for (const schema of schemas)
      await admin.query(`drop schema if exists "${schema}" cascade`).catch(() => undefined);
    await admin.end().catch(() => undefined);
    await s3.close();
    if (!kept) await rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

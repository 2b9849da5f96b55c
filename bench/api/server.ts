import type { ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onCleanup, runInherited, spawnPlaced, stopChild, type Placement } from './processes.js';

export const ADMIN = { name: 'bench-admin@example.com', password: 'bench-password-0123456789' };

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

/**
 * Builds only when dist/main.js is missing or older than some file under src/: the benchmark then
 * measures the code in the tree without paying 10+ s of tsc on every run. `force` always builds.
 */
export async function ensureBuilt(root: string, force: boolean): Promise<void> {
  const main = join(root, 'dist', 'main.js');
  if (!existsSync(join(root, 'src'))) {
    // A bare build (--root pointing at a copied dist/): nothing to build from, so use it as it is.
    if (!existsSync(main)) throw new Error(`${main} is missing and there is no src/ to build it from`);
    console.log(`build: ${root} has no src/, serving its dist/ as it is`);
    return;
  }
  const reason = force
    ? 'asked for (--rebuild)'
    : !existsSync(main)
      ? 'dist/main.js is missing'
      : newestMtime(join(root, 'src')) > statSync(main).mtimeMs
        ? 'src/ is newer than dist/main.js'
        : undefined;
  if (!reason) {
    console.log('build: dist/ is up to date with src/, not rebuilding (--rebuild forces it)');
    return;
  }
  console.log(`build: ${reason}: npm run build`);
  const code = await runInherited('npm', ['run', 'build', '--silent'], root);
  if (code !== 0) throw new Error(`npm run build failed (exit ${code})`);
}

/** A port nobody listens on right now (the kernel picks it), so runs never collide with a dev server. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

export interface ServerOptions {
  root: string;
  placement: Placement;
  logLevel: 'warn' | 'info';
  /** postgres://…; undefined for the embedded SQLite. */
  databaseUrl: string | undefined;
  databaseSchema: string | undefined;
  /**
   * `on`: the rate limiter runs (counts every request, syncs every second) with limits no case
   * reaches, so its cost is in the figures (the default); `off`: RATE_LIMIT=off, to measure that cost.
   */
  rateLimit?: 'on' | 'off';
  /** Options for node itself (`--cpu-prof`, …), before dist/main.js. */
  nodeArgs?: string[];
  /** More environment for the server (a TSA_URL, …). */
  env?: Record<string, string>;
  /** A data directory to start on (one made by an earlier server), kept at the end; else a fresh one, removed. */
  dataDir?: string;
}

export interface RunningServer {
  baseUrl: string;
  /** The node process itself: taskset execs it, so this is not a wrapper's pid. */
  pid: number | undefined;
  logFile: string;
  /** The last lines the server wrote, for an error message. */
  logTail(lines?: number): string;
  stop(): Promise<void>;
}

/**
 * Starts `node dist/main.js` on a fresh DATA_DIR and waits for /healthz. Its stdout and stderr go
 * to a file rather than a pipe: a pipe would need this process to read every log line, which at
 * LOG_LEVEL=info would put a second process's CPU time into the figures.
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const fresh = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'signery-bench-'));
  const removeDataDir = onCleanup(async () => {
    if (fresh) rmSync(dataDir, { recursive: true, force: true });
  });
  const logFile = join(dataDir, 'server.log');
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_EMAIL: ADMIN.name,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: options.logLevel,
    ...(options.rateLimit === 'off'
      ? { RATE_LIMIT: 'off' }
      : { RATE_LIMIT_PER_MINUTE: '1000000000', RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000000000' }),
    ...options.env,
  };
  delete env.DATABASE_URL;
  delete env.DATABASE_SCHEMA;
  if (options.databaseUrl) env.DATABASE_URL = options.databaseUrl;
  if (options.databaseSchema) env.DATABASE_SCHEMA = options.databaseSchema;

  const out = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    const args = [...(options.nodeArgs ?? []), join(options.root, 'dist', 'main.js')];
    child = spawnPlaced(options.placement, process.execPath, args, {
      cwd: options.root,
      env,
      stdio: ['ignore', out, out],
    });
  } finally {
    closeSync(out);
  }
  const logTail = (lines = 20) => {
    try {
      // pino lines carry whole stack traces; the start of each says enough to know what broke.
      return readFileSync(logFile, 'utf8')
        .trimEnd()
        .split('\n')
        .slice(-lines)
        .map((line) => (line.length > 400 ? `${line.slice(0, 400)}…` : line))
        .join('\n');
    } catch {
      return '(no server log)';
    }
  };
  const stopServer = onCleanup(() => stopChild(child));
  const server: RunningServer = {
    baseUrl: `http://127.0.0.1:${port}`,
    pid: child.pid,
    logFile,
    logTail,
    async stop() {
      stopServer();
      await stopChild(child);
      removeDataDir();
      if (fresh) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  try {
    await waitForHealth(server.baseUrl, child);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}

async function waitForHealth(baseUrl: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let spawnError: Error | undefined;
  child.once('error', (error) => (spawnError = error));
  while (Date.now() < deadline) {
    if (spawnError) throw new Error(`the server could not be started: ${spawnError.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the server exited during start-up (${child.exitCode ?? child.signalCode})`);
    }
    try {
      const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(1_000) });
      if (response.ok) return;
    } catch {
      // Not listening yet: migrations and the administrator's argon2 hash come first.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`GET /healthz did not answer 200 within ${timeoutMs / 1000} s`);
}

/** Logs in (as the bootstrap administrator by default) and checks that the token really authenticates. */
export async function logIn(
  baseUrl: string,
  credentials: { name: string; password: string } = ADMIN,
): Promise<string> {
  const response = await fetch(`${baseUrl}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(credentials),
  });
  const body = (await response.json()) as { token?: unknown };
  if (!response.ok || typeof body.token !== 'string') {
    throw new Error(`POST /api/v1/login answered ${response.status}: ${JSON.stringify(body)}`);
  }
  // GET /login answers 200 {logged:false} to a bad token, so a broken token would still look like
  // 2xx under load: prove once that it is accepted, or the GET figures would measure the wrong path.
  const check = await fetch(`${baseUrl}/api/v1/login?token=${encodeURIComponent(body.token)}`);
  const session = (await check.json()) as { logged?: unknown };
  if (!check.ok || session.logged !== true) {
    throw new Error(
      `GET /api/v1/login with the new token answered ${check.status}: ${JSON.stringify(session)}`,
    );
  }
  return body.token;
}

/**
 * Makes `count` API keys with `token` (POST /api/key) and proves each is accepted by GET /login, so
 * the authenticated GET can spread its requests over many callers' tokens.
 */
export async function makeApiKeys(baseUrl: string, token: string, count: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await fetch(`${baseUrl}/api/v1/api/key?token=${encodeURIComponent(token)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ description: `bench ${i + 1}` }),
    });
    const body = (await response.json()) as { id?: unknown };
    if (!response.ok || typeof body.id !== 'string') {
      throw new Error(`POST /api/v1/api/key answered ${response.status}: ${JSON.stringify(body)}`);
    }
    const check = await fetch(`${baseUrl}/api/v1/login?token=${encodeURIComponent(body.id)}`);
    const session = (await check.json()) as { logged?: unknown };
    if (!check.ok || session.logged !== true) {
      throw new Error(
        `GET /api/v1/login with API key ${i + 1} answered ${check.status}: ${JSON.stringify(session)}`,
      );
    }
    keys.push(body.id);
  }
  return keys;
}

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { ADMIN, dropSchema, TEST_RATE_LIMITS } from '../helpers/server.js';

/** A Signery server in its own process, as `npm run dev` starts it. */
export interface ServerProcess {
  url: string;
  child: ChildProcessWithoutNullStreams;
  output(): string;
  /** Sends `signal` and resolves when the process has exited. */
  stop(signal: NodeJS.Signals): Promise<void>;
}

export function serverEnv(extra: Record<string, string>): Record<string, string> {
  return {
    ...(process.env as Record<string, string>),
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_EMAIL: ADMIN.name,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'info',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    // The test's own kept-alive connections would hold a SIGTERM for the whole drain (no proxy here).
    SHUTDOWN_DRAIN_SECONDS: '0',
    ...TEST_RATE_LIMITS,
    ...extra,
  };
}

export async function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env, stdio: 'pipe' });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`server exited early (${code}): ${output}`)));
  });
  return {
    url,
    child,
    output: () => output,
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** `signery worker` (the job worker alone, no HTTP) in its own process; resolves once it has started. */
export async function spawnWorkerNode(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'worker'], { env, stdio: 'pipe' });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('job worker started')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker exited early (${code}): ${output}`)));
  });
  return {
    url: '',
    child,
    output: () => output,
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** Runs a TypeScript file with tsx and resolves with its standard output when it exits 0. */
export async function runScript(file: string, args: string[], env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { env, stdio: 'pipe' });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${file} exited with ${code}: ${err}`);
  return out;
}

export async function logIn(url: string): Promise<string> {
  const response = await fetch(`${url}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: ADMIN.name, password: ADMIN.password }),
  });
  const body = (await response.json()) as { token: string };
  return body.token;
}

export async function createTenantWebhook(url: string, token: string, callbackUrl: string): Promise<string> {
  const response = await fetch(`${url}/api/v1/webhooks?token=${encodeURIComponent(token)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'tenant', callbackUrl }),
  });
  if (response.status !== 200) throw new Error(`webhook creation failed: ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

/** Ends a several-node test: stops the nodes, closes what it opened, drops its PostgreSQL schema. */
export async function tearDownNodes(setup: {
  nodes: ServerProcess[];
  closers: ({ close(): Promise<void> } | undefined)[];
  dataDirs: string[];
  databaseUrl: string;
  schema: string;
}): Promise<void> {
  for (const node of setup.nodes) await node.stop('SIGTERM');
  for (const closer of setup.closers) await closer?.close();
  for (const dir of setup.dataDirs) await rm(dir, { recursive: true, force: true });
  await dropSchema(setup.schema, setup.databaseUrl);
}

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { buildApp, type App, type AppOptions } from '../../src/app.js';
import type { Clock } from '../../src/base/clock.js';
import { loadConfig } from '../../src/base/config.js';

export const ADMIN = { name: 'admin@example.test', password: 'admin-password-1' };

/** The password of the users createUser makes, unless the test gives one. */
export const USER_PASSWORD = 'user-password-1';

/** The PostgreSQL server the suite runs against, when TEST_DATABASE_URL is set (CI runs both). */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

/**
 * The suite calls from one address with a few tokens, thousands of times in places (test/fuzz,
 * test/scale): limits no test reaches unless it sets its own (test/http/rate-limits.test.ts).
 */
export const TEST_RATE_LIMITS = {
  RATE_LIMIT_PER_MINUTE: '10000000',
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: '10000000',
  RATE_LIMIT_PUBLIC_VERIFY_PER_MINUTE: '10000000',
};

/**
 * A store of its own for a server a test runs: a data directory and, on PostgreSQL, a schema (named
 * after `name`). `env` points a server at them (DATA_DIR, DATABASE_URL, DATABASE_SCHEMA); `remove`
 * deletes both.
 */
export interface TestStore {
  dataDir: string;
  schema: string | undefined;
  env: Record<string, string>;
  remove(): Promise<void>;
}

export async function makeStore(name: string): Promise<TestStore> {
  const dataDir = await mkdtemp(join(tmpdir(), `signery-${name}-`));
  const schema = TEST_DATABASE_URL
    ? `t_${name.replaceAll('-', '_')}_${randomBytes(4).toString('hex')}`
    : undefined;
  return {
    dataDir,
    schema,
    env: {
      DATA_DIR: dataDir,
      ...(TEST_DATABASE_URL && schema ? { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema } : {}),
    },
    async remove() {
      await rm(dataDir, { recursive: true, force: true });
      if (schema) await dropSchema(schema);
    },
  };
}

/** Drops a schema, with all it holds, from the PostgreSQL database at `url` (TEST_DATABASE_URL's). */
export async function dropSchema(schema: string, url = TEST_DATABASE_URL): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`drop schema if exists "${schema}" cascade`);
  await client.end();
}

export interface TestServer {
  url: string;
  app: App;
  dataDir: string;
  /** The PostgreSQL schema of this server's database (undefined on SQLite). */
  schema: string | undefined;
  /** Calls the API (paths are relative to /api/v1 unless they start with `//`). */
  api: (method: string, path: string, options?: CallOptions) => Promise<ApiResponse>;
  /** Logs in and returns the token. */
  login: (name: string, password: string, extra?: Record<string, unknown>) => Promise<string>;
  adminToken: () => Promise<string>;
  close: () => Promise<void>;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** multipart/form-data: text fields and one file. */
  form?: { fields?: Record<string, string>; file?: { name: string; type: string; bytes: Buffer } };
  /** Sent as is, not JSON-encoded. */
  rawBody?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  // Tests read arbitrary fields of JSON answers.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
}

export interface StartOptions {
  env?: Record<string, string>;
  clock?: Clock;
  logger?: Record<string, unknown>;
  /** A second node over the same database and files as this server (which keeps owning them). */
  sameStoreAs?: TestServer;
  /** Job worker settings (AppOptions.worker). */
  worker?: AppOptions['worker'];
  /** The port to listen on (freePort), when the settings must name it (PUBLIC_URL, FILES_PUBLIC_URL). */
  port?: number;
}

/**
 * A real server on an ephemeral loopback port, on its own data directory and, on PostgreSQL, its own
 * schema (dropped on close), so tests never depend on each other.
 */
export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const shared = options.sameStoreAs;
  const store = shared ? undefined : await makeStore('test');
  const dataDir = shared?.dataDir ?? store!.dataDir;
  const schema = shared ? shared.schema : store!.schema;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ADMIN_EMAIL: ADMIN.name,
    ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'warn',
    ...TEST_RATE_LIMITS,
    ...(TEST_DATABASE_URL ? { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema } : {}),
    ...options.env,
  });
  const app = await buildApp(config, {
    clock: options.clock,
    // Errors only (an answer 500, a crash in a job): the one kind of log line a passing suite has none
    // of, and the one a failing run needs to say why.
    logger: options.logger ?? { level: 'error' },
    ...(options.worker !== undefined ? { worker: options.worker } : {}),
  });
  const address = await app.server.listen({ port: options.port ?? 0, host: '127.0.0.1' });
  const url = address.replace('localhost', '127.0.0.1');

  const api: TestServer['api'] = (method, path, call) => callApi(url, method, path, call);

  const login: TestServer['login'] = async (name, password, extra = {}) => {
    const response = await api('POST', '/login', { body: { name, password, ...extra } });
    if (response.status !== 200)
      throw new Error(`login of ${name} failed: ${response.status} ${response.text}`);
    return response.body.token as string;
  };

  let admin: string | undefined;
  return {
    url,
    app,
    dataDir,
    schema,
    api,
    login,
    adminToken: async () => (admin ??= await login(ADMIN.name, ADMIN.password)),
    async close() {
      await app.close();
      await store?.remove();
    },
  };
}

/**
 * Calls the API of the server at `baseUrl` (a node, or a proxy in front of several): paths are
 * relative to /api/v1 unless they start with `//`; a JSON answer is parsed into `body`.
 */
export async function callApi(
  baseUrl: string,
  method: string,
  path: string,
  call: CallOptions = {},
): Promise<ApiResponse> {
  const target = new URL(path.startsWith('//') ? path.slice(1) : `/api/v1${path}`, baseUrl);
  for (const [k, v] of Object.entries(call.query ?? {})) target.searchParams.set(k, v);
  if (call.token) target.searchParams.set('token', call.token);
  const headers: Record<string, string> = { ...call.headers };
  let body: string | FormData | undefined = call.rawBody;
  if (call.form) {
    const form = new FormData();
    for (const [k, v] of Object.entries(call.form.fields ?? {})) form.append(k, v);
    if (call.form.file) {
      const { name, type, bytes } = call.form.file;
      form.append('file', new Blob([bytes], { type }), name);
    }
    body = form;
  }
  if (call.body !== undefined) {
    body = JSON.stringify(call.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(target, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** `response` when it is a 200, else an error naming `call`: for setup steps that must work. */
export function mustSucceed(response: ApiResponse, call: string): ApiResponse {
  if (response.status !== 200) throw new Error(`${call} failed: ${response.status} ${response.text}`);
  return response;
}

/** Uploads bytes through an upload endpoint (default POST /files/saveFile) and returns the file id. */
export async function upload(
  server: TestServer,
  token: string,
  bytes: Buffer,
  options: { name?: string; type?: string; path?: string } = {},
): Promise<string> {
  const response = await server.api('POST', options.path ?? '/files/saveFile', {
    token,
    form: { file: { name: options.name ?? 'document.pdf', type: options.type ?? 'application/pdf', bytes } },
  });
  if (response.status !== 200) throw new Error(`upload failed: ${response.status} ${response.text}`);
  return response.body.file.id as string;
}

/** Creates a user through the API as the administrator and returns its id. */
export async function createUser(
  server: TestServer,
  user: Record<string, unknown> & { name: string },
  token?: string,
): Promise<string> {
  const response = await server.api('POST', '/users', {
    token: token ?? (await server.adminToken()),
    body: { password: USER_PASSWORD, ...user },
  });
  if (response.status !== 200)
    throw new Error(`creating ${user.name} failed: ${response.status} ${response.text}`);
  return response.body.id as string;
}

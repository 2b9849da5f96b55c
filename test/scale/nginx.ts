import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The operator's example configuration, which the test's nginx runs from. */
export const NGINX_TEMPLATE = 'deploy/nginx.conf';

/** Debian's nginx, when installed (.ci/run installs it). */
export const NGINX_BINARY = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((path) => existsSync(path));

/** One line of the access log (deploy/nginx.conf's `signery` format). */
export interface AccessLine {
  method: string;
  uri: string;
  status: number;
  /** The nodes tried, in order (`host:port`); more than one when nginx retried the request. */
  upstreams: string[];
  upstreamStatuses: string[];
}

export interface Nginx {
  url: string;
  /** The access log so far. */
  accessLog(): Promise<AccessLine[]>;
  errorLog(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Writes deploy/nginx.conf with the test's values — the upstream's servers (each with the template's
 * parameters), the listen address and the access log's path — and fails when the template no longer has
 * the lines it replaces, so the test keeps running the configuration operators are given.
 */
export function configFromTemplate(
  template: string,
  options: { upstreams: string[]; listen: string; accessLog: string },
): string {
  const lines = template.split('\n');
  const only = (pattern: RegExp, what: string): number => {
    const found = lines.flatMap((line, index) => (pattern.test(line) ? [index] : []));
    if (found.length !== 1) throw new Error(`${NGINX_TEMPLATE}: expected one ${what}, found ${found.length}`);
    return found[0]!;
  };
  const listen = only(/^\s*listen\s+[^;]+;/, '"listen …;"');
  lines[listen] = lines[listen]!.replace(/listen\s+[^;]+;/, `listen ${options.listen};`);
  const log = only(/^\s*access_log\s+\S+\s+signery;/, '"access_log … signery;"');
  lines[log] = lines[log]!.replace(/access_log\s+\S+/, `access_log ${options.accessLog}`);
  // The upstream's servers: the first one's parameters (max_fails, fail_timeout) for each node.
  const serverLine = /^(\s*)server\s+[\w.-]+:\d+([^;]*);\s*$/;
  const servers = lines.flatMap((line, index) => (serverLine.test(line) ? [index] : []));
  const [, indent = '', parameters = ''] = serverLine.exec(lines[servers[0] ?? -1] ?? '') ?? [];
  if (servers.length === 0)
    throw new Error(`${NGINX_TEMPLATE}: no "server host:port …;" line in its upstream`);
  const nodes = options.upstreams.map((address) => `${indent}server ${address}${parameters};`);
  return lines
    .flatMap((line, index) => (index === servers[0] ? nodes : servers.includes(index) ? [] : [line]))
    .join('\n');
}

/**
 * nginx in the foreground as a child process, on `port` (loopback), in front of `upstreams`, with
 * every path it writes (pid, logs, temporary files) in a directory of its own.
 */
export async function startNginx(options: { upstreams: string[]; port: number }): Promise<Nginx> {
  if (!NGINX_BINARY) throw new Error('nginx is not installed');
  const dir = await mkdtemp(join(tmpdir(), 'signery-nginx-'));
  const accessLog = join(dir, 'access.log');
  const errorLog = join(dir, 'error.log');
  const site = configFromTemplate(await readFile(NGINX_TEMPLATE, 'utf8'), {
    upstreams: options.upstreams,
    listen: `127.0.0.1:${options.port}`,
    accessLog,
  });
  await writeFile(join(dir, 'signery.conf'), site);
  const temporary = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((kind) => `  ${kind}_temp_path ${join(dir, kind)};`)
    .join('\n');
  await writeFile(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes 1;',
      // As root, the workers would otherwise run as nobody, who may not write to this directory.
      process.getuid?.() === 0 ? 'user root;' : '',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${errorLog} warn;`,
      'events { worker_connections 1024; }',
      'http {',
      temporary,
      `  include ${join(dir, 'signery.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const check = spawnSync(
    NGINX_BINARY,
    ['-t', '-q', '-e', errorLog, '-p', dir, '-c', join(dir, 'nginx.conf')],
    {
      encoding: 'utf8',
    },
  );
  if (check.status !== 0) throw new Error(`nginx -t failed: ${check.stderr}${check.stdout}`);

  const child = spawn(NGINX_BINARY, ['-e', errorLog, '-p', dir, '-c', join(dir, 'nginx.conf')], {
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const readLog = () => readFile(errorLog, 'utf8').catch(() => '');
  await waitUntilListening(options.port, () => child.exitCode !== null, readLog);
  return {
    url: `http://127.0.0.1:${options.port}`,
    async accessLog() {
      const text = await readFile(accessLog, 'utf8').catch(() => '');
      return text.split('\n').filter(Boolean).map(parseAccessLine);
    },
    errorLog: readLog,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function waitUntilListening(
  port: number,
  exited: () => boolean,
  errorLog: () => Promise<string>,
): Promise<void> {
  const until = Date.now() + 10_000;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (exited() || Date.now() > until) throw new Error(`nginx did not start: ${await errorLog()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const ACCESS_LINE =
  /^\S+ \S+ \S+ "(\S+) (\S+)" (\d+) upstream=(.*) upstream_status=(.*) upstream_time=.* bytes=\d+$/;

function parseAccessLine(line: string): AccessLine {
  const match = ACCESS_LINE.exec(line);
  if (!match) throw new Error(`unexpected access log line: ${line}`);
  const [, method = '', uri = '', status = '0', upstreams = '', statuses = ''] = match;
  const list = (text: string) => (text === '-' ? [] : text.split(/, | : /));
  return {
    method,
    uri,
    status: Number(status),
    upstreams: list(upstreams),
    upstreamStatuses: list(statuses),
  };
}

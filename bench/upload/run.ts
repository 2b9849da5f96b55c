/**
 * bench/upload: large uploads (and their downloads) through the real HTTP API, printing MB/s and how
 * much the server's resident memory grew at its peak, beside the floors measured in the same rounds:
 * what a trivial Node HTTP server receives from the same client, what the disk writes with an fsync,
 * and what SHA-256 and SHA-512 hash on one core. Targets (issue 26): ≥ 300 MB/s for 200 MB to the
 * filesystem store, RSS growth below 64 MB whatever the file size.
 *
 *   npm run bench:upload -- [--mb 200] [--runs 3] [--compare DIR] [--server-cpus 0]
 *
 * The client (this process) runs on CPU 1; the servers are placed on every CPU explicitly (`taskset`),
 * since they would otherwise inherit the client's CPU 1 (`--server-cpus 0` pins them to CPU 0, the
 * placement of the runs before issue 26: then the SHA-512 worker has no core of its own). The header
 * prints the CPUs each process really got.
 * `--compare DIR` serves a second build (another checkout's dist/) beside this one, the two measured
 * in turns within each round, so that both see the same load from the rest of the machine.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { request } from 'node:http';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { mainThreadTicks, processTicks, TICKS_PER_SECOND } from '../api/cpu.js';
import {
  installExitHandlers,
  pinThisProcess,
  runBenchmark,
  spawnPlaced,
  type Placement,
} from '../api/processes.js';
import { ensureBuilt, freePort, logIn, startServer, type RunningServer } from '../api/server.js';
import { markdownTable } from '../markdown-table.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const MB = 1024 * 1024;
const TARGET = { uploadMbPerSecond: 300, rssGrowthMb: 64 };

const { values } = parseArgs({
  options: {
    mb: { type: 'string', default: '200' },
    runs: { type: 'string', default: '3' },
    compare: { type: 'string' },
    'server-cpus': { type: 'string' },
    rebuild: { type: 'boolean', default: false },
  },
});
const sizeMb = Number(values.mb);
const runs = Number(values.runs);
// Always an explicit affinity: a child inherits its parent's, and this process pins itself to CPU 1
// before it starts the servers, so without one every server thread would share the client's core.
const serverCpus = values['server-cpus'] ?? `0-${availableParallelism() - 1}`;
const serverPlacement: Placement = { prefix: ['taskset', '-c', serverCpus], niceness: undefined };

/**
 * What the client sends: a random 16-byte prefix making each upload's bytes unique (the store keeps
 * identical bytes once), then eight random megabytes over and over. Never mutated while queued on the
 * socket, and cheap for the client, whose CPU would otherwise be in the figures.
 */
const BLOCKS = Array.from({ length: 8 }, () => randomBytes(MB));

function* payload(prefix: Buffer, totalBytes: number): Generator<Buffer> {
  yield prefix;
  for (let sent = prefix.length, n = 0; sent < totalBytes; n++) {
    const block = BLOCKS[n % BLOCKS.length]!;
    const size = Math.min(block.length, totalBytes - sent);
    yield size === block.length ? block : block.subarray(0, size);
    sent += size;
  }
}

function sha512Of(prefix: Buffer, totalBytes: number): string {
  const hash = createHash('sha512');
  for (const part of payload(prefix, totalBytes)) hash.update(part);
  return hash.digest('hex');
}

/** Sends `parts` as the body of one request, honouring the socket's backpressure; answers the body. */
function send(
  url: string,
  headers: Record<string, string | number>,
  parts: Iterable<Buffer>,
): Promise<{ status: number; body: string }> {
  return new Promise((resolveAnswer, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (text: string) => (body += text));
      res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    const iterator = parts[Symbol.iterator]();
    const pump = () => {
      for (let next = iterator.next(); !next.done; next = iterator.next()) {
        if (!req.write(next.value)) return void req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

/** A streamed multipart upload of `totalBytes` to POST /files/saveFile, starting with `prefix`. */
async function upload(
  server: RunningServer,
  token: string,
  totalBytes: number,
  prefix: Buffer,
): Promise<{ seconds: number; id: string; checksum: string; expected: string }> {
  const boundary = `----signery${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const started = performance.now();
  const answer = await send(
    `${server.baseUrl}/api/v1/files/saveFile?token=${token}`,
    {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': head.length + totalBytes + tail.length,
    },
    [head, ...payload(prefix, totalBytes), tail],
  );
  const seconds = (performance.now() - started) / 1000;
  if (answer.status !== 200) throw new Error(`upload: ${answer.status} ${answer.body.slice(0, 300)}`);
  const { file } = JSON.parse(answer.body) as { file: { id: string; checksum: string } };
  return { seconds, id: file.id, checksum: file.checksum, expected: sha512Of(prefix, totalBytes) };
}

/** Downloads a file whole, counting its bytes. */
async function download(server: RunningServer, token: string, id: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${server.baseUrl}/api/v1/files/loadFile/hash/${id}?token=${token}`);
  let received = 0;
  for await (const part of response.body as unknown as AsyncIterable<Uint8Array>) received += part.length;
  if (received !== sizeMb * MB) throw new Error(`downloaded ${received} bytes of ${sizeMb * MB}`);
  return (performance.now() - started) / 1000;
}

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** The CPUs a process may run on, as the kernel has them (`Cpus_allowed_list`). */
function allowedCpus(pid: number): string {
  return /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '?';
}

/** Resets the kernel's peak-RSS mark, so VmHWM afterwards is the peak of what follows. */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/**
 * A Node HTTP server that only counts the bytes of each request: what this machine's loopback and
 * Node's HTTP parser allow, the ceiling of any upload through HTTP. Placed like the servers.
 */
async function startSink(): Promise<{ url: string; pid: number; stop(): void }> {
  const port = await freePort();
  const code = `require('node:http').createServer((req, res) => { let n = 0; req.on('data', (c) => (n += c.length)); req.on('end', () => res.end(String(n))); }).listen(${port}, '127.0.0.1', () => console.log('ready'));`;
  const child = spawnPlaced(serverPlacement, process.execPath, ['-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((ready, fail) => {
    child.stdout!.once('data', () => ready());
    child.once('exit', (exitCode) => fail(new Error(`the sink server exited (${exitCode})`)));
  });
  return { url: `http://127.0.0.1:${port}/`, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

async function sinkMbPerSecond(url: string): Promise<number> {
  const started = performance.now();
  const answer = await send(url, { 'content-length': sizeMb * MB }, payload(randomBytes(16), sizeMb * MB));
  if (Number(answer.body) !== sizeMb * MB) throw new Error(`the sink received ${answer.body} bytes`);
  return sizeMb / ((performance.now() - started) / 1000);
}

/** Writes the payload to a new file in `dir` in 1 MiB writes, then fsyncs it: MB/s. */
function diskMbPerSecond(dir: string): number {
  const path = join(dir, 'disk-floor.bin');
  const started = performance.now();
  const fd = openSync(path, 'w');
  try {
    for (const part of payload(randomBytes(16), sizeMb * MB)) writeSync(fd, part);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const seconds = (performance.now() - started) / 1000;
  rmSync(path);
  return sizeMb / seconds;
}

function hashMbPerSecond(algorithm: 'sha256' | 'sha512'): number {
  const started = performance.now();
  const hash = createHash(algorithm);
  for (const part of payload(randomBytes(16), sizeMb * MB)) hash.update(part);
  hash.digest();
  return sizeMb / ((performance.now() - started) / 1000);
}

interface Build {
  label: string;
  server: RunningServer;
  token: string;
}

async function startBuild(label: string, root: string): Promise<Build> {
  await ensureBuilt(root, values.rebuild && root === ROOT);
  const server = await startServer({
    root,
    placement: serverPlacement,
    logLevel: 'warn',
    databaseUrl: undefined,
    databaseSchema: undefined,
  });
  const token = await logIn(server.baseUrl);
  const settings = await fetch(`${server.baseUrl}/api/v1/settings/properties?token=${token}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ dropZoneMaxSize: Math.min(1024, sizeMb + 1), storageLimitMb: 100 * 1024 }),
  });
  if (!settings.ok) throw new Error(`PUT /settings/properties: ${settings.status} ${await settings.text()}`);
  return { label, server, token };
}

/**
 * The longest the server's event loop was held since the last call, in ms: prom-client's
 * `nodejs_eventloop_lag_max_seconds` (perf_hooks' event-loop delay, reset at each scrape of GET
 * /metrics; its resolution of 10 ms is part of every figure). A request arriving meanwhile waits this long.
 */
async function eventLoopMaxLagMs(server: RunningServer): Promise<number> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const seconds = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1];
  if (seconds === undefined) throw new Error('GET /metrics has no nodejs_eventloop_lag_max_seconds');
  return Number(seconds) * 1000;
}

/**
 * One upload of new bytes and its download on `build`, then the same bytes uploaded again (the store
 * keeps one copy: the new one replaces the old), each with the server's CPU time, peak RSS growth and
 * longest event-loop stall.
 */
async function measureBuild(build: Build): Promise<string[][]> {
  const pid = build.server.pid!;
  const prefix = randomBytes(16);
  const measureUpload = async () => {
    const before = memory(pid);
    resetPeak(pid);
    await eventLoopMaxLagMs(build.server);
    const cpuBefore = { all: processTicks(pid), main: mainThreadTicks(pid) };
    const uploaded = await upload(build.server, build.token, sizeMb * MB, prefix);
    const cpu = {
      all: (processTicks(pid) - cpuBefore.all) / TICKS_PER_SECOND,
      main: (mainThreadTicks(pid) - cpuBefore.main) / TICKS_PER_SECOND,
    };
    const lagMs = await eventLoopMaxLagMs(build.server);
    const after = memory(pid);
    if (uploaded.checksum !== uploaded.expected) throw new Error(`${build.label}: wrong SHA-512 checksum`);
    return { uploaded, cpu, lagMs, after, growth: (after.peak - before.rss) / MB };
  };
  const row = (bytes: string, measured: Awaited<ReturnType<typeof measureUpload>>, download: string[]) => {
    const mbPerSecond = sizeMb / measured.uploaded.seconds;
    return [
      build.label,
      bytes,
      mbPerSecond.toFixed(0),
      (measured.cpu.all * 1000).toFixed(0),
      (measured.cpu.main * 1000).toFixed(0),
      measured.growth.toFixed(1),
      measured.lagMs.toFixed(0),
      ...download,
      [
        mbPerSecond >= TARGET.uploadMbPerSecond ? 'MB/s met' : 'MB/s MISSED',
        measured.growth < TARGET.rssGrowthMb ? 'RSS met' : 'RSS MISSED',
      ].join(', '),
    ];
  };
  const first = await measureUpload();
  resetPeak(pid);
  const downloadSeconds = await download(build.server, build.token, first.uploaded.id);
  const afterDownload = memory(pid);
  const again = await measureUpload();
  return [
    row('new', first, [
      (sizeMb / downloadSeconds).toFixed(0),
      ((afterDownload.peak - first.after.rss) / MB).toFixed(1),
    ]),
    row('the same again', again, ['-', '-']),
  ];
}

async function main(): Promise<void> {
  installExitHandlers();
  const cores = availableParallelism();
  console.log(
    `machine: ${cpus()[0]?.model ?? 'unknown'}, ${cores} CPUs, Node ${process.version}; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  // The client on CPU 1, every thread of it.
  if (cores > 1) pinThisProcess('1');
  const builds = [await startBuild('this tree', ROOT)];
  if (values.compare) builds.push(await startBuild(`compare (${values.compare})`, resolve(values.compare)));
  console.log(
    `client on CPU ${allowedCpus(process.pid)}; servers on CPU ${builds.map((build) => allowedCpus(build.server.pid!)).join(' and ')}; ${runs} rounds of ${sizeMb} MB to the filesystem store`,
  );
  const sink = await startSink();
  const floorDir = mkdtempSync(join(tmpdir(), 'signery-bench-disk-'));
  try {
    const rows: string[][] = [];
    const floors: string[][] = [];
    for (let round = 1; round <= runs; round++) {
      for (const build of builds) {
        for (const row of await measureBuild(build)) {
          rows.push([String(round), ...row]);
          console.log(`round ${round}: ${row.join(' | ')}`);
        }
      }
      floors.push([
        String(round),
        (await sinkMbPerSecond(sink.url)).toFixed(0),
        diskMbPerSecond(floorDir).toFixed(0),
        hashMbPerSecond('sha256').toFixed(0),
        hashMbPerSecond('sha512').toFixed(0),
      ]);
    }
    console.log(`\nuploads of ${sizeMb} MB through HTTP (load average now ${loadavg()[0]!.toFixed(2)})`);
    console.log(
      markdownTable(
        [
          'round',
          'build',
          'bytes',
          'upload MB/s',
          'server CPU ms',
          'of it the request thread',
          'RSS growth MB',
          'event loop held, max ms',
          'download MB/s',
          'download RSS MB',
          `target (≥ ${TARGET.uploadMbPerSecond} MB/s, < ${TARGET.rssGrowthMb} MB)`,
        ],
        rows,
      ),
    );
    console.log(`\nfloors measured in the same rounds (${sizeMb} MB each)`);
    console.log(
      markdownTable(
        [
          'round',
          'HTTP sink MB/s (no parsing, no storage)',
          'disk write + fsync MB/s',
          'SHA-256 MB/s (1 core)',
          'SHA-512 MB/s (1 core)',
        ],
        floors,
      ),
    );
  } finally {
    sink.stop();
    rmSync(floorDir, { recursive: true, force: true });
    for (const build of builds) await build.server.stop();
  }
}

runBenchmark(main);

/**
 * bench/start: how long `npm start` on a built checkout takes to answer GET /healthz, beside the floor,
 * `node dist/main.js` started the same way (issue 41: within 5 s; it took 31.8 s when `npm start`
 * rebuilt every time). Each start gets a new data directory (SQLite: the first start of an
 * installation, migrations included), and the two are measured in turns so both see the same load.
 *
 *   npm run bench:start -- [--runs 5]
 *
 * dist/ is built first when stale (scripts/build.mjs), outside the measured time: what is measured is
 * the start of a checkout whose build is up to date.
 *
 * Then the command line: `signery --version` and `signery jobs list` (on a migrated data directory)
 * from exit to exit, beside the floor, `node -e 0`. Each command loads only what it uses, so an
 * operator's look at the queue, or an MCP client starting `signery mcp`, does not wait for the server's
 * modules.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { markdownTable } from '../markdown-table.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const TARGET_SECONDS = 5;

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const runs = Number(values.runs);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Seconds from spawning `command` to its first 200 on /healthz; the process is then stopped (SIGTERM). */
async function timeToHealthy(command: string, args: string[]): Promise<number> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'signery-bench-start-'));
  const started = performance.now();
  // A group of its own: `npm start` runs node under a shell; the whole group gets the signal.
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${command} ${args.join(' ')} exited (${child.exitCode})`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ok) return (performance.now() - started) / 1000;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const built = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
if (built.status !== 0) throw new Error('the build failed');

const ways = [
  { name: '`npm start` (built checkout)', command: 'npm', args: ['start', '--silent'] },
  { name: '`node dist/main.js` (the floor)', command: process.execPath, args: ['dist/main.js'] },
];
const seconds = new Map<string, number[]>(ways.map((way) => [way.name, []]));
for (let run = 1; run <= runs; run++) {
  for (const way of ways) {
    const taken = await timeToHealthy(way.command, way.args);
    seconds.get(way.name)!.push(taken);
    console.error(`run ${run}/${runs}: ${way.name} ${taken.toFixed(2)} s`);
  }
}

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
console.log(
  `\nbench/start, ${new Date().toISOString()}, Node ${process.version}, load average ${loadavg()
    .map((load) => load.toFixed(1))
    .join(' ')}, ${runs} runs (target: npm start answers /healthz within ${TARGET_SECONDS} s)\n`,
);
console.log(
  markdownTable(
    ['start', 'median (s)', 'fastest (s)', 'slowest (s)'],
    ways.map((way) => {
      const list = seconds.get(way.name)!;
      return [way.name, median(list).toFixed(2), Math.min(...list).toFixed(2), Math.max(...list).toFixed(2)];
    }),
  ),
);

/** Seconds from spawning `args` under this Node to its exit (0 expected). */
function timeToExit(args: string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  execFileSync(process.execPath, args, { cwd: ROOT, env, stdio: 'ignore' });
  return (performance.now() - started) / 1000;
}

const cliData = mkdtempSync(join(tmpdir(), 'signery-bench-cli-'));
const cliEnv = { ...process.env, DATA_DIR: cliData, LOG_LEVEL: 'warn' };
execFileSync(process.execPath, ['dist/cli.js', 'migrate'], { cwd: ROOT, env: cliEnv, stdio: 'ignore' });
const commands = [
  { name: '`signery --version`', args: ['dist/cli.js', '--version'] },
  { name: '`signery jobs list`', args: ['dist/cli.js', 'jobs', 'list'] },
  { name: '`node -e 0` (the floor)', args: ['-e', '0'] },
];
const cliSeconds = commands.map((command) =>
  Array.from({ length: Math.max(runs, 3) }, () => timeToExit(command.args, cliEnv)),
);
rmSync(cliData, { recursive: true, force: true });
console.log('');
console.log(
  markdownTable(
    ['command', 'median (s)', 'fastest (s)', 'slowest (s)'],
    commands.map((command, i) => {
      const list = cliSeconds[i]!;
      return [
        command.name,
        median(list).toFixed(2),
        Math.min(...list).toFixed(2),
        Math.max(...list).toFixed(2),
      ];
    }),
  ),
);

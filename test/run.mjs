// Runs every test file under test/ with node:test (Node 20 has no --test glob support).
// TEST_DATABASE_URL=postgres://... runs the same suite on PostgreSQL instead of SQLite.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return collect(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * The slowest files first. Two files run at a time, so a long file that starts last keeps one core busy
 * alone at the end (the signer page's Chromium file takes 4 to 6 minutes): started first, it runs beside
 * the many short ones. The order comes from test/durations.json, one full run's seconds per file (a
 * copy of test-artifacts/durations.json, which every run writes); a file it does not know yet is taken
 * to be slow (UNKNOWN_SECONDS), so a new long file is not left for last either.
 */
const UNKNOWN_SECONDS = 120;
function slowestFirst(paths) {
  const known = existsSync('test/durations.json')
    ? JSON.parse(readFileSync('test/durations.json', 'utf8'))
    : {};
  const seconds = (path) => known[path.replace(/\\/g, '/')] ?? UNKNOWN_SECONDS;
  return [...paths].sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b));
}

const only = process.argv.slice(2);
const files = only.length > 0 ? only : slowestFirst(collect('test'));
mkdirSync('test-artifacts', { recursive: true });
// A test file whose process keeps a handle open (a socket, a timer) would keep `node --test` waiting
// forever: --test-force-exit ends each file once its tests are done, and --test-timeout turns a test
// that hangs into a failure that names it. It also bounds each file as a whole: the signer page's
// browser file (test/web/signer-page.test.ts, some thirty journeys in Chromium) takes 4 to 6 minutes
// on two busy cores, hence 10.
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=2',
    '--test-force-exit',
    '--test-timeout=600000',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=./test/durations-reporter.mjs',
    '--test-reporter-destination=stdout',
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);

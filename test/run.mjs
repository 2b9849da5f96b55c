// Runs every test file under test/ with node:test (Node 20 has no --test glob support).
// TEST_DATABASE_URL=postgres://... runs the same suite on PostgreSQL instead of SQLite.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return collect(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

// Every run writes each file's seconds to test-artifacts/durations.json (test/durations-reporter.mjs),
// to find the files worth speeding up. node --test sorts the files it is given, so their order here
// does not change the schedule.
const only = process.argv.slice(2);
const files = only.length > 0 ? only : collect('test').sort();
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

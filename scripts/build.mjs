// Builds dist/ (the server, then the pages), or, without --force, only when what it is built from has
// changed since the last build: `npm start`, `npx signery` and the install's `prepare` then start at
// once on a built checkout (issue 41), and a changed source is still rebuilt.
//
//   node scripts/build.mjs           build when stale (prepare, scripts/start.mjs)
//   node scripts/build.mjs --force   build anyway (npm run build)
//
// What a build is made from is summed up as a fingerprint (each input file's path, size and
// modification time): dist/.build-stamp keeps the one taken when the last build began, so an edit made
// while it ran still counts as a change.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMP = join(ROOT, 'dist', '.build-stamp');
/** What a build reads: the sources, the pages, their configurations and the dependencies' versions. */
const INPUTS = [
  'src',
  'web',
  'tsconfig.json',
  'tsconfig.build.json',
  'package.json',
  'package-lock.json',
  'scripts/build.mjs',
  'scripts/compress-assets.mjs',
];
/** What the server needs of a build (its entry points and the pages' HTML). */
const OUTPUTS = ['dist/main.js', 'dist/cli.js', 'dist/web/index.html'];

function files(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return [];
  if (!stat.isDirectory()) return [[relative(ROOT, path), stat.size, stat.mtimeMs]];
  return readdirSync(path)
    .filter((name) => name !== 'node_modules' && name !== 'dist')
    .flatMap((name) => files(join(path, name)));
}

/** The fingerprint of the build's inputs as they are now. */
export function fingerprint() {
  const hash = createHash('sha256');
  for (const [path, size, mtime] of INPUTS.flatMap((input) => files(join(ROOT, input))).sort((a, b) =>
    a[0] < b[0] ? -1 : 1,
  )) {
    hash.update(`${path}\t${size}\t${mtime}\n`);
  }
  return hash.digest('hex');
}

/** Why dist/ must be built again, or undefined when it is up to date. */
export function staleness() {
  // An installed package without its sources (a container's production stage) runs the dist/ it got.
  if (!existsSync(join(ROOT, 'src'))) return undefined;
  if (OUTPUTS.some((output) => !existsSync(join(ROOT, output)))) return 'dist/ is not built';
  if (!existsSync(STAMP)) return 'dist/ was built without a stamp';
  if (readFileSync(STAMP, 'utf8').trim() !== fingerprint()) return 'sources changed since the last build';
  return undefined;
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    throw new Error(`${[command, ...args].join(' ')} failed (${result.status ?? result.signal})`);
  }
}

/** Builds dist/ and stamps it with the fingerprint taken before the build began. */
export function build() {
  const before = fingerprint();
  rmSync(STAMP, { force: true });
  const bin = (name) => join(ROOT, 'node_modules', '.bin', name);
  run(bin('tsc'), ['-p', 'tsconfig.build.json']);
  run(bin('vite'), ['build', '--config', 'web/vite.config.ts', '--logLevel', 'warn']);
  run(process.execPath, [join(ROOT, 'scripts', 'compress-assets.mjs')]);
  writeFileSync(STAMP, `${before}\n`);
}

/** Builds dist/ when it is stale (or always, with `force`); says which, on stderr. */
export function ensureBuilt({ force = false } = {}) {
  const reason = force ? 'asked to' : staleness();
  if (!reason) return false;
  console.error(`Building dist/ (${reason})…`);
  build();
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    ensureBuilt({ force: process.argv.includes('--force') });
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}

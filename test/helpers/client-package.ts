import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * The typed client (clients/typescript, `@signery/client`) installed the way its README and the
 * integration guide tell an integrator to: into a project of their own, outside the repository, from
 * the repository's path or from the tarball `npm pack` makes. npm builds the package's `dist/` as it
 * packs or links it (its `prepare` script), in the repository's clients/typescript: two test files
 * doing so at once would read each other's half-written files, so they take turns (a lock folder).
 */

const ROOT = join(import.meta.dirname, '..', '..');
export const CLIENT_DIR = join(ROOT, 'clients', 'typescript');
const LOCK = join(ROOT, 'test-artifacts', 'client-build.lock');

export interface Run {
  code: number | null;
  output: string;
}

/** Runs a command to its end, with its output (stdout and stderr) kept. */
export function run(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/**
 * npm, as the integrator runs it, failing with its output. `--prefer-offline`: the client's one
 * dependency (openapi-fetch) comes from npm's cache when it is there, from the registry otherwise.
 */
async function npm(args: string[], cwd: string): Promise<string> {
  const { code, output } = await run('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd,
  });
  if (code !== 0) throw new Error(`npm ${args.join(' ')} (exit ${code}):\n${output}`);
  return output;
}

/** A project of the integrator's own: an empty ES module package in a temporary folder. */
export async function aFreshProject(name: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `signery-${name}-`));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** `npm install <repository>/clients/typescript` in the project (npm links the folder and builds it). */
export async function installClientFromPath(project: string): Promise<void> {
  await whileBuilding(() => npm(['install', '--prefix', project, CLIENT_DIR], project));
}

/** In the project, `npm pack <repository>/clients/typescript`, then `npm install` of the tarball. */
export async function installClientFromTarball(project: string): Promise<string> {
  const output = await whileBuilding(() => npm(['pack', CLIENT_DIR, '--loglevel', 'error'], project));
  const tarball = output.trim().split('\n').at(-1)!;
  await npm(['install', '--prefix', project, `./${tarball}`], project);
  return tarball;
}

/** Runs `build` while no other test process builds clients/typescript/dist. */
async function whileBuilding<T>(build: () => Promise<T>): Promise<T> {
  await mkdir(join(LOCK, '..'), { recursive: true });
  for (;;) {
    try {
      await mkdir(LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (await holderEnded()) await rm(LOCK, { recursive: true, force: true });
      else await sleep(250);
    }
  }
  try {
    await writeFile(join(LOCK, 'pid'), String(process.pid));
    return await build();
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

/** Whether the process that took the lock has ended without giving it back (a test run killed). */
async function holderEnded(): Promise<boolean> {
  const pid = Number(await readFile(join(LOCK, 'pid'), 'utf8').catch(() => ''));
  // Without a pid, taken an instant ago (its pid is being written), or long ago by a process killed
  // before it wrote it.
  if (!pid) return Date.now() - (await stat(LOCK).catch(() => ({ mtimeMs: 0 }))).mtimeMs > 60_000;
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * Every child this benchmark starts, so that a failure, Ctrl-C or an uncaught error never leaves a
 * server or a load generator running behind it.
 */
const children = new Set<ChildProcess>();

/** Undo steps (drop a schema, remove a directory), run newest first by `runCleanups`. */
const cleanups: (() => Promise<void>)[] = [];

export function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

export function onCleanup(step: () => Promise<void>): () => void {
  cleanups.push(step);
  return () => {
    const index = cleanups.indexOf(step);
    if (index >= 0) cleanups.splice(index, 1);
  };
}

export async function runCleanups(): Promise<void> {
  while (cleanups.length > 0) {
    const step = cleanups.pop();
    try {
      await step?.();
    } catch (error) {
      console.error(`cleanup step failed: ${String(error)}`);
    }
  }
}

/** Ends a child: SIGTERM (the server drains and closes its stores), SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * Installs the handlers that stop children on the way out. The `exit` handler can only act
 * synchronously, so it is a last resort: SIGKILL whatever is still alive.
 */
export function installExitHandlers(): void {
  process.once('exit', () => {
    for (const child of children) child.kill('SIGKILL');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping the server and load generator, then cleaning up…`);
      void Promise.all([...children].map((child) => stopChild(child, 3_000)))
        .then(runCleanups)
        .finally(() => process.exit(130));
    });
  }
}

/** Where and how a child runs: a command prefix (taskset, nice) and a raised priority, if any. */
export interface Placement {
  prefix: string[];
  niceness: number | undefined;
}

export interface Pinning {
  /** The server on CPU 0 (no prefix when pinning is unavailable). */
  server: Placement;
  /** The load generator on CPU 1. */
  load: Placement;
  pinned: boolean;
  /** The nice value given to server and load generator, when --priority raised it. */
  niceness: number | undefined;
  /** What could not be done as asked, for the header of the report. */
  notes: string[];
}

// High enough that the scheduler gives a contended core almost wholly (about 98 %) to the benchmark,
// not so high that kernel threads of normal priority starve.
const PRIORITY_NICENESS = -15;

/**
 * Server and load generator on separate cores, so they do not steal time from each other and the
 * figures describe one core of server. Falls back to no pinning (with a note) rather than failing,
 * because a rough figure on a one-core laptop is still useful to its owner. With `priority`, both
 * also run at a raised priority (root only), for shared machines where other work would otherwise
 * take half of the server's core.
 */
export function cpuPinning(priority: boolean): Pinning {
  const notes: string[] = [];
  const raise = priority && process.getuid?.() === 0;
  if (priority && !raise) notes.push('--priority needs root: ignored');
  const nice = raise ? ['nice', '-n', String(PRIORITY_NICENESS)] : [];
  const niceness = raise ? PRIORITY_NICENESS : undefined;
  const cores = availableParallelism();
  const taskset = spawnSync('taskset', ['--version'], { stdio: 'ignore' });
  if (taskset.error) notes.push('taskset not found: server and load generator are not pinned');
  else if (cores < 2) notes.push(`only ${cores} CPU: server and load generator share it`);
  else {
    return {
      server: { prefix: [...nice, 'taskset', '-c', '0'], niceness },
      load: { prefix: [...nice, 'taskset', '-c', '1'], niceness },
      pinned: true,
      niceness,
      notes,
    };
  }
  return {
    server: { prefix: nice, niceness },
    load: { prefix: nice, niceness },
    pinned: false,
    niceness,
    notes,
  };
}

/**
 * Spawns `command` as placed and tracks it. With a raised priority the child gets a session of its
 * own and that session's autogroup gets the nice value: with autogroup scheduling (the default on
 * most distributions) a process's nice value only weighs against its own session, so `nice` alone
 * does nothing against a test run started from another terminal.
 */
export function spawnPlaced(
  placement: Placement,
  command: string,
  args: string[],
  options: SpawnOptions,
): ChildProcess {
  const [first, ...rest] = [...placement.prefix, command, ...args];
  const raised = placement.niceness !== undefined;
  const child = track(spawn(first ?? command, rest, { ...options, detached: raised }));
  if (raised && child.pid !== undefined) {
    try {
      writeFileSync(`/proc/${child.pid}/autogroup`, String(placement.niceness));
    } catch {
      // No autogroup scheduling on this kernel: the nice prefix already did what can be done.
    }
  }
  return child;
}

/** Runs a command with the terminal attached (the build), resolving with its exit code. */
export function runInherited(command: string, args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = track(spawn(command, args, { cwd, stdio: 'inherit' }));
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

/** Moves every thread of this process to `cpus` (taskset's list: `1`, `0,1`); nothing where taskset is missing. */
export function pinThisProcess(cpus: string): void {
  spawnSync('taskset', ['-a', '-cp', cpus, String(process.pid)], { stdio: 'ignore' });
}

/** Runs a benchmark's `main`: a failure is printed and makes the exit status 1; the cleanups run either way. */
export function runBenchmark(main: () => Promise<void>): void {
  main()
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    })
    .finally(runCleanups);
}

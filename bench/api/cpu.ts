import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU accounting from /proc (Linux). Req/s alone cannot tell a slow server from one that was not
 * given its core: another process on CPU 0 (a test run, a compiler) halves the figures without any
 * change in the code. Knowing how busy the server was, and who else ran on its core, tells them apart.
 */

// USER_HZ: the unit of /proc/<pid>/stat and /proc/stat. 100 on every mainstream Linux build.
export const TICKS_PER_SECOND = 100;

export interface CpuSnapshot {
  at: number;
  /** utime + stime of the server process, in ticks. */
  serverTicks: number;
  /** Busy ticks (everything but idle and iowait) of each CPU, by index. */
  busyTicks: number[];
  /** utime + stime of every PostgreSQL process, when asked for. */
  postgresTicks: number | undefined;
}

export interface CpuUsage {
  /** The server's CPU time as a share of one core (1 = a whole core). */
  server: number;
  /** How busy each CPU was overall, as a share of that CPU. */
  busy: number[];
  /** CPU seconds the server spent. */
  serverSeconds: number;
  /** PostgreSQL's CPU time as a share of one core (its backends run on either core). */
  postgres: number | undefined;
}

function parseStat(stat: string): { command: string; ticks: number } {
  // The command name (field 2) may hold spaces; fields are counted after its closing parenthesis.
  const close = stat.lastIndexOf(')');
  const fields = stat.slice(close + 2).split(' ');
  return {
    command: stat.slice(stat.indexOf('(') + 1, close),
    ticks: Number(fields[11]) + Number(fields[12]),
  };
}

/** utime + stime of a process (every thread of it), in ticks. */
export function processTicks(pid: number): number {
  return parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8')).ticks;
}

/** utime + stime of a process's main thread alone (its event loop), in ticks. */
export function mainThreadTicks(pid: number): number {
  return parseStat(readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8')).ticks;
}

// PostgreSQL is a system service, not pinned: its backends share the cores with the server and the
// load generator, so their time is counted apart rather than mistaken for foreign noise.
export function allPostgresTicks(): number {
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      if (stat.command === 'postgres') ticks += stat.ticks;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return ticks;
}

export function cpuBusyTicks(): number[] {
  const busy: number[] = [];
  for (const line of readFileSync('/proc/stat', 'utf8').split('\n')) {
    const match = /^cpu(\d+) (.*)$/.exec(line);
    if (!match) continue;
    // Fields: user nice system idle iowait irq softirq steal; idle and iowait are not busy.
    const [user, nice, system, , , irq, softirq, steal] = (match[2] ?? '').split(' ').map(Number);
    busy[Number(match[1])] =
      (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0);
  }
  return busy;
}

/** undefined where /proc is not available (not Linux): the report then leaves the CPU columns out. */
export function cpuSnapshot(serverPid: number | undefined, withPostgres: boolean): CpuSnapshot | undefined {
  if (serverPid === undefined) return undefined;
  try {
    return {
      at: performance.now(),
      serverTicks: processTicks(serverPid),
      busyTicks: cpuBusyTicks(),
      postgresTicks: withPostgres ? allPostgresTicks() : undefined,
    };
  } catch {
    return undefined;
  }
}

export function cpuUsage(
  before: CpuSnapshot | undefined,
  after: CpuSnapshot | undefined,
): CpuUsage | undefined {
  if (!before || !after) return undefined;
  const seconds = (after.at - before.at) / 1000;
  if (seconds <= 0) return undefined;
  const serverSeconds = (after.serverTicks - before.serverTicks) / TICKS_PER_SECOND;
  return {
    server: serverSeconds / seconds,
    busy: after.busyTicks.map(
      (ticks, cpu) => (ticks - (before.busyTicks[cpu] ?? ticks)) / TICKS_PER_SECOND / seconds,
    ),
    serverSeconds,
    postgres:
      before.postgresTicks !== undefined && after.postgresTicks !== undefined
        ? (after.postgresTicks - before.postgresTicks) / TICKS_PER_SECOND / seconds
        : undefined,
  };
}

/** Share of the machine's CPUs busy over `ms` milliseconds before the benchmark starts. */
export async function machineBusy(ms = 1_000): Promise<number[] | undefined> {
  try {
    const before = cpuBusyTicks();
    const start = performance.now();
    await new Promise((resolve) => setTimeout(resolve, ms));
    const after = cpuBusyTicks();
    const seconds = (performance.now() - start) / 1000;
    return after.map((ticks, cpu) => (ticks - (before[cpu] ?? ticks)) / TICKS_PER_SECOND / seconds);
  } catch {
    return undefined;
  }
}

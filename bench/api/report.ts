import type { CpuUsage } from './cpu.js';
import type { LoadResult } from './load.js';

export type DatabaseKind = 'sqlite' | 'postgres';

/** What the project aims for; printed beside the figures, never asserted (machines differ). */
export interface Target {
  minRequestsPerSecond: number;
  /** Absent when the aim names a throughput only (POST /search). */
  maxP99Ms?: number;
}

export interface Measurement {
  database: DatabaseKind;
  caseName: string;
  logLevel: string;
  result: LoadResult;
  target: Target | undefined;
  cpu: CpuUsage | undefined;
  /** Whether the server had CPU 0 to itself by construction (taskset), so others' use of it means noise. */
  pinned: boolean;
}

/** Above this share of CPU 0 used by other processes, a case's figures say more about them than the server. */
export const NOISE_LIMIT = 0.1;

/** CPU time the server spent per answered request, in µs: stays meaningful when the core was shared. */
export function cpuPerRequestUs(m: Measurement): number | undefined {
  if (!m.cpu || m.result.totalRequests === 0) return undefined;
  return (m.cpu.serverSeconds * 1e6) / m.result.totalRequests;
}

/**
 * Share of CPU 0 that went to something other than the server and PostgreSQL (other processes, the
 * hypervisor). PostgreSQL's time is subtracted whole although some of it ran on CPU 1, so this is a
 * lower bound on PostgreSQL runs: enough to flag a disturbed run, not to correct one.
 */
export function othersOnServerCore(m: Measurement): number | undefined {
  if (!m.cpu || !m.pinned) return undefined;
  return Math.max(0, (m.cpu.busy[0] ?? 0) - m.cpu.server - (m.cpu.postgres ?? 0));
}

export function isNoisy(m: Measurement): boolean {
  return (othersOnServerCore(m) ?? 0) > NOISE_LIMIT;
}

const percent = (share: number | undefined) => (share === undefined ? '-' : `${Math.round(share * 100)}%`);
const micro = (us: number | undefined) => (us === undefined ? '-' : integer.format(us));

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function describeTarget(target: Target | undefined): string {
  if (!target) return 'no target';
  const throughput = `≥ ${integer.format(target.minRequestsPerSecond)} req/s`;
  return target.maxP99Ms === undefined ? throughput : `${throughput}, p99 < ${target.maxP99Ms} ms`;
}

export function verdict(measurement: Measurement): string {
  const { result, target } = measurement;
  if (isBroken(measurement)) return 'BROKEN';
  if (!target) return '-';
  const misses = [
    result.requestsPerSecond < target.minRequestsPerSecond ? 'req/s' : undefined,
    target.maxP99Ms !== undefined && result.p99Ms >= target.maxP99Ms ? 'p99' : undefined,
  ].filter((miss) => miss !== undefined);
  return misses.length === 0 ? 'met' : `missed (${misses.join(', ')})`;
}

/** Errors, other statuses than 2xx, or answers without the case's expected text or answer (a refused token). */
export function isBroken(measurement: Measurement): boolean {
  return measurement.result.errors > 0 || measurement.result.non2xx > 0 || measurement.result.mismatches > 0;
}

/** The one line printed as soon as a case is measured. */
export function caseLine(m: Measurement): string {
  const r = m.result;
  const statuses = Object.entries(r.statusCodes)
    .map(([status, count]) => `${status}×${count}`)
    .join(' ');
  return (
    `${m.database} | ${m.caseName} | LOG_LEVEL=${m.logLevel} | ${integer.format(r.requestsPerSecond)} req/s | ` +
    `p50 ${r.p50Ms} ms | p99 ${r.p99Ms} ms | non-2xx ${r.non2xx} | errors ${r.errors}` +
    (r.timeouts > 0 ? ` (${r.timeouts} timeouts)` : '') +
    (r.mismatches > 0 ? ` | ${r.mismatches} answers without the expected body` : '') +
    ` | server CPU ${percent(m.cpu?.server)}, ${micro(cpuPerRequestUs(m))} µs/request` +
    (m.cpu?.postgres !== undefined ? `, PostgreSQL CPU ${percent(m.cpu.postgres)}` : '') +
    (m.pinned ? `, others on CPU 0 ${percent(othersOnServerCore(m))}${isNoisy(m) ? ' (NOISY)' : ''}` : '') +
    ` | target: ${describeTarget(m.target)} → ${verdict(m)}` +
    (r.non2xx > 0 ? ` | statuses: ${statuses}` : '')
  );
}

/** The closing table, in Markdown so it can be pasted into bench/README.md as it is. */
export function summaryTable(measurements: Measurement[]): string {
  const header = [
    'database',
    'case',
    'LOG_LEVEL',
    'req/s',
    'p50 ms',
    'p99 ms',
    'non-2xx',
    'errors',
    'server CPU',
    'CPU µs/req',
    'PostgreSQL CPU',
    'others on CPU 0',
    'target',
    'verdict',
  ];
  const rows = measurements.map((m) => [
    m.database,
    m.caseName,
    m.logLevel,
    integer.format(m.result.requestsPerSecond),
    String(m.result.p50Ms),
    String(m.result.p99Ms),
    String(m.result.non2xx),
    String(m.result.errors),
    percent(m.cpu?.server),
    micro(cpuPerRequestUs(m)),
    percent(m.cpu?.postgres),
    percent(othersOnServerCore(m)),
    describeTarget(m.target),
    verdict(m),
  ]);
  const numeric = new Set([3, 4, 5, 6, 7, 8, 9, 10, 11]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const format = (cells: string[]) =>
    `| ${cells
      .map((cell, column) =>
        numeric.has(column) ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0),
      )
      .join(' | ')} |`;
  const rule = `|${widths.map((width, column) => (numeric.has(column) ? `${'-'.repeat(width + 1)}:` : '-'.repeat(width + 2))).join('|')}|`;
  return [format(header), rule, ...rows.map(format)].join('\n');
}

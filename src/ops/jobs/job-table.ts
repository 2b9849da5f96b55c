import type { JobsChanged } from './change-jobs.js';
import type { JobView } from './job-selection.js';

/**
 * `3d4h`, `2h5m`, `1h0m`, `4m10s`, `12s`: a span as a person reads it, in its largest unit and the
 * next one down (shown even when it is zero, so an hour and two seconds reads `1h0m`, not `1h2s`).
 */
export function span(ms: number): string {
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ];
  let rest = Math.max(0, Math.round(ms / 1000) * 1000);
  const parts: string[] = [];
  for (const [unit, size] of units) {
    if (parts.length > 0 || rest >= size || unit === 's') {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join('');
}

/**
 * The jobs as a table for a terminal: id (to name it in retry or cancel), type, state, attempts (of
 * the limit, when there is one), age, when it runs next, and its last error (one line, cut).
 */
export function jobTable(jobs: readonly JobView[], total: number, now: Date): string {
  if (total === 0) return 'No job matches.';
  const header = ['ID', 'TYPE', 'STATE', 'ATTEMPTS', 'AGE', 'NEXT RUN', 'LAST ERROR'];
  const rows = jobs.map((job) => [
    job.id,
    job.type,
    job.state,
    job.maxAttempts === null ? String(job.attempts) : `${job.attempts}/${job.maxAttempts}`,
    span(now.getTime() - Date.parse(job.createdAt)),
    job.runAt === null
      ? '-'
      : Date.parse(job.runAt) <= now.getTime()
        ? 'now'
        : `in ${span(Date.parse(job.runAt) - now.getTime())}`,
    oneLine(job.lastError ?? '-', 72),
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column]!.length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ');
  const more = total > jobs.length ? [`… and ${total - jobs.length} more (--limit shows more)`] : [];
  return [line(header), ...rows.map(line), ...more, `${total} ${total === 1 ? 'job' : 'jobs'}`].join('\n');
}

/** What retry or cancel did, in a few lines: counts by the state jobs were in, then each job left alone. */
export function changeReport(verb: 'retried' | 'cancelled', result: JobsChanged): string {
  const lines: string[] = [];
  const byState = (entries: readonly { from?: string; state?: string }[]) => {
    const counts = new Map<string, number>();
    for (const entry of entries) {
      const state = entry.from ?? entry.state ?? '';
      counts.set(state, (counts.get(state) ?? 0) + 1);
    }
    return [...counts].map(([state, n]) => `${n} ${state}`).join(', ');
  };
  lines.push(
    result.changed.length === 0
      ? `No job ${verb}.`
      : `${verb[0]!.toUpperCase()}${verb.slice(1)} ${result.changed.length} ${result.changed.length === 1 ? 'job' : 'jobs'} (${byState(result.changed)}).`,
  );
  if (result.leftAlone.length > 0) {
    lines.push(`Left alone ${result.leftAlone.length} (${byState(result.leftAlone)}):`);
    for (const job of result.leftAlone.slice(0, 20)) lines.push(`  ${job.id} (${job.state}): ${job.reason}`);
    if (result.leftAlone.length > 20)
      lines.push(`  … and ${result.leftAlone.length - 20} more (--json lists them all)`);
  }
  for (const id of result.unknown) lines.push(`No job has the id ${id}.`);
  return lines.join('\n');
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

import type { ExpressionBuilder, Kysely } from 'kysely';
import { JOB_STATES } from '../../jobs/queue-stats.js';
import type { Database } from '../../store/db/schema.js';
import { InvalidArguments } from '../operation-failed.js';

/**
 * Which jobs a `signery jobs` command is about: the states of GET /metrics' `signery_jobs` gauge
 * (ready, delayed, waiting, running: queue-stats.ts), and the finished ones, `dead` (failed for
 * good, or cancelled) and `done`.
 */
export const LISTED_STATES = [...JOB_STATES, 'dead', 'done'] as const;
export type ListedState = (typeof LISTED_STATES)[number];

export interface JobSelection {
  /** Jobs named by id (none: any). */
  ids: readonly string[];
  /** Job types, exactly (`webhook.deliver`, `mail.send`, `schedule:webhooks.purge`); none: any. */
  types: readonly string[];
  /** None: any. */
  states: readonly ListedState[];
  /** Only jobs enqueued longer ago than this. */
  olderThanMs?: number | undefined;
}

/** A job as the commands show it: never its payload (addresses, encrypted links). */
export interface JobView {
  id: string;
  type: string;
  state: ListedState;
  /** Attempts so far (for a dead job, those of its last series). */
  attempts: number;
  maxAttempts: number | null;
  /** When it was enqueued. */
  createdAt: string;
  /** When it is due (ready or delayed); null otherwise. */
  runAt: string | null;
  /** After this no retry is scheduled. */
  deadlineAt: string | null;
  /** Its lane (one webhook's deliveries: `webhook:<id>`), where jobs run one at a time in order. */
  lane: string | null;
  lastError: string | null;
  updatedAt: string;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `90s`, `15m`, `1h`, `2d`, `1w`, or combined (`1h30m`): milliseconds. */
export function parseAge(text: string): number {
  const parts = [...text.matchAll(/(\d+)([smhdw])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text)
    throw new InvalidArguments(`--older-than takes a duration such as 30m, 1h, 2d or 1h30m, not "${text}"`);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * UNITS[unit!]!, 0);
}

/** Checks `--state` values. */
export function parseStates(values: readonly string[]): ListedState[] {
  for (const value of values)
    if (!(LISTED_STATES as readonly string[]).includes(value))
      throw new InvalidArguments(`--state must be one of ${LISTED_STATES.join(', ')}, not "${value}"`);
  return values as ListedState[];
}

/** Whether the selection names anything: retry and cancel refuse to act on the whole queue by default. */
export function narrows(selection: JobSelection): boolean {
  return (
    selection.ids.length > 0 ||
    selection.types.length > 0 ||
    selection.states.length > 0 ||
    selection.olderThanMs !== undefined
  );
}

/**
 * The jobs table narrowed to `selection` at `now`, to select from. Each condition uses columns of the
 * claim index (`status`, `run_at`) or the primary key, so a selection by state reads that state's rows.
 */
export function selectJobs(db: Kysely<Database>, selection: JobSelection, now: Date) {
  const at = now.toISOString();
  const inState = (eb: ExpressionBuilder<Database, 'jobs'>, state: ListedState) => {
    switch (state) {
      case 'ready':
        return eb.and([eb('status', '=', 'queued'), eb('run_at', '<=', at)]);
      case 'delayed':
        return eb.and([eb('status', '=', 'queued'), eb('run_at', '>', at)]);
      case 'waiting':
        return eb.and([eb('status', '=', 'queued'), eb('run_at', 'is', null)]);
      default:
        return eb('status', '=', state);
    }
  };
  return db
    .selectFrom('jobs')
    .$if(selection.ids.length > 0, (qb) => qb.where('id', 'in', [...selection.ids]))
    .$if(selection.types.length > 0, (qb) => qb.where('type', 'in', [...selection.types]))
    .$if(selection.states.length > 0, (qb) =>
      qb.where((eb) => eb.or(selection.states.map((state) => inState(eb, state)))),
    )
    .$if(selection.olderThanMs !== undefined, (qb) =>
      qb.where('created_at', '<', new Date(now.getTime() - (selection.olderThanMs ?? 0)).toISOString()),
    );
}

/** The columns a JobView is made of. */
export const VIEW_COLUMNS = [
  'id',
  'type',
  'status',
  'run_at',
  'attempts',
  'max_attempts',
  'deadline_at',
  'ordering_key',
  'last_error',
  'created_at',
  'updated_at',
] as const;

type ViewRow = {
  id: string;
  type: string;
  status: string;
  run_at: string | Date | null;
  attempts: number | string;
  max_attempts: number | string | null;
  deadline_at: string | Date | null;
  ordering_key: string | null;
  last_error: string | null;
  created_at: string | Date;
  updated_at: string | Date;
};

/** A job's state at `now`, as selectJobs reads it. */
export function jobState(row: { status: string; run_at: string | Date | null }, now: Date): ListedState {
  if (row.status !== 'queued') return row.status as ListedState;
  if (row.run_at === null) return 'waiting';
  return new Date(row.run_at).getTime() <= now.getTime() ? 'ready' : 'delayed';
}

const iso = (value: string | Date | null) => (value === null ? null : new Date(value).toISOString());

export function jobView(row: ViewRow, now: Date): JobView {
  const state = jobState(row, now);
  return {
    id: row.id,
    type: row.type,
    state,
    attempts: Number(row.attempts),
    maxAttempts: row.max_attempts === null ? null : Number(row.max_attempts),
    createdAt: iso(row.created_at)!,
    runAt: state === 'ready' || state === 'delayed' ? iso(row.run_at) : null,
    deadlineAt: iso(row.deadline_at),
    lane: row.ordering_key,
    lastError: row.last_error,
    updatedAt: iso(row.updated_at)!,
  };
}

import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { JobSettlement, SettlementBatch, SettlementRow, SettledRow } from '../job-rows.js';
import type { Database } from '../schema.js';
import { NOTIFY_WORKERS } from './job-channel.js';

/**
 * The settlements as one PostgreSQL statement: for each request, its job's update and record, its
 * followers' (when its claim holds and every follower still waits), and, when the run's last job
 * finishes, the lane's count and its next job (made due, or handed off) — what `finish` does in
 * three statements per job. The jobs travel as arrays, one element per job, and the records as JSON,
 * typed by their table's row type, so the statement's text depends only on which tables get
 * records: it is prepared once.
 *
 * A statement reads one snapshot, taken before it waits for the lanes' locks: had an enqueue to a
 * lane committed in between, its job would be invisible here. That matters only when the snapshot
 * shows the run no next job (an invisible job comes after every visible one: sequence numbers are
 * taken under the lane's lock, in commit order); then the lane's `last_seq` as of the snapshot is
 * compared with the one locked (the latest), and when they differ the request is left out — nothing
 * of it is written — to be written again with a snapshot that sees the new job. Lock order as in
 * `finish`: lanes (in key order, as emitters take them), then jobs.
 *
 * The planner cannot know how many jobs a batch holds; the `= any(array)` conditions beside the
 * joins let it look rows up by key instead of scanning the jobs table (whose size grows with the
 * backlog).
 *
 * Returns a row per job of the batch: whether its request's lane let it be written (`ok`), whether
 * it was settled, and, on a request's own row, the lane's next job when it was made due or handed off.
 */
async function settleInOneStatement(db: Kysely<Database>, batch: SettlementBatch): Promise<SettledRow[]> {
  const { rows } = batch;
  const column = <T>(value: (row: SettlementRow) => T): T[] => rows.map(value);
  const ids = (own: boolean) => rows.filter((row) => (row.position === 0) === own).map((row) => row.id);
  const recordSteps = recordInserts(rows);
  const result = await sql<SettledRow>`
    with batch as materialized (
      select * from unnest(
        ${column((r) => r.slot)}::int[],
        ${column((r) => r.position)}::int[],
        ${column((r) => r.id)}::text[],
        ${column((r) => r.lockedBy)}::text[],
        ${column((r) => r.attempts)}::int[],
        ${column((r) => r.status)}::text[],
        ${column((r) => r.runAt)}::timestamptz[],
        ${column((r) => r.error)}::text[],
        ${column((r) => r.lane)}::text[],
        ${column((r) => r.seq)}::bigint[],
        ${column((r) => r.taker)}::text[],
        ${column((r) => r.leaseUntil)}::timestamptz[],
        ${column((r) => JSON.stringify(r.takeTypes))}::jsonb[]
      ) as i (slot, position, id, locked_by, attempts, status, run_at, error, lane, seq, taker, lease_until, take_types)
    ),
    -- A run's followers are written only if every one of them still waits, as when it was read ahead.
    broken as materialized (
      select distinct i.slot from batch i
      left join jobs j on j.id = any(${ids(false)}::text[]) and j.id = i.id
      where i.position > 0
        and (j.id is null or j.status <> 'queued' or j.run_at is not null or j.attempts <> i.attempts - 1)
    ),
    member as materialized (
      select * from batch where position = 0 or slot not in (select slot from broken)
    ),
    -- The last job each request settles: after it comes its lane's next job.
    tail as materialized (select distinct on (slot) * from member order by slot, position desc),
    seen as materialized (select key, last_seq from job_lanes where key = any(${batch.lanes}::text[])),
    locked as materialized (
      select key, last_seq from job_lanes where key = any(${batch.lanes}::text[]) order by key for update
    ),
    -- Each finishing run's next job as the snapshot sees it.
    candidate as materialized (
      select t.slot, n.id, n.type, n.status, n.run_at
      from tail t
      cross join lateral (
        select id, type, status, run_at from jobs
        where ordering_key = t.lane and ordering_seq > t.seq
        order by ordering_seq limit 1
      ) n
      where t.lane is not null and t.status <> 'queued'
    ),
    -- Joined, not looked up only when needed: every lane is locked (in key order) whether or not
    -- its run needs the comparison, before any job is written.
    ok as materialized (
      select t.slot from tail t
      left join seen s on s.key = t.lane
      left join locked l on l.key = t.lane
      where t.lane is null or t.status = 'queued'
        or t.slot in (select slot from candidate)
        or s.last_seq is not distinct from l.last_seq
    ),
    job as (
      update jobs j set
        status = m.status,
        run_at = m.run_at,
        locked_by = case when m.status = 'queued' then null else j.locked_by end,
        lease_until = null,
        last_error = m.error,
        updated_at = ${batch.at}
      from member m
      where m.position = 0 and m.slot in (select slot from ok)
        and j.id = any(${ids(true)}::text[])
        and j.id = m.id and j.status = 'running' and j.locked_by = m.locked_by and j.attempts = m.attempts
      returning m.slot, m.position, m.status, m.lane
    ),
    -- Followers were read while waiting: they ran under the head's claim, and that attempt counts.
    follow as (
      update jobs j set
        status = m.status,
        run_at = m.run_at,
        locked_by = case when m.status = 'queued' then null else m.locked_by end,
        attempts = m.attempts,
        last_error = m.error,
        updated_at = ${batch.at}
      from member m
      where m.position > 0 and m.slot in (select slot from job) and j.id = m.id
        -- Looked up by id, one follower at a time: an "= any(ids)" beside the join, as for the
        -- heads, would be prepared again for each (runs are long: quadratic). Still waiting, checked
        -- again on a row changed meanwhile; one expression, not three conditions: as conditions, the
        -- planner may look followers up by them in the jobs_due index (every waiting job, for each).
        and case when j.status = 'queued' and j.run_at is null then j.attempts = m.attempts - 1 else false end
      returning m.slot, m.position, m.status, m.lane
    ),
    settled as (select * from job union all select * from follow),
    lane as (
      update job_lanes l set active = l.active - f.finished, updated_at = ${batch.at}
      from (
        select slot, lane, count(*) as finished from settled
        where status <> 'queued' and lane is not null
        group by slot, lane
      ) f
      where l.key = any(${batch.lanes}::text[]) and l.key = f.lane
      returning f.slot, l.active
    ),
    successor as (
      select t.slot, t.taker, t.lease_until, c.id, c.status, c.run_at, l.last_seq,
        (t.taker is not null and t.take_types ? c.type) as take
      from lane
      join tail t on t.slot = lane.slot
      join candidate c on c.slot = lane.slot
      join locked l on l.key = t.lane
      where lane.active > 0 and c.status = 'queued' and c.run_at is null
        and (t.slot, t.position) in (select slot, position from settled)
    ),
    next as (
      update jobs j set
        status = case when f.take then 'running' else j.status end,
        run_at = ${batch.at},
        locked_by = case when f.take then f.taker else j.locked_by end,
        lease_until = case when f.take then f.lease_until else j.lease_until end,
        attempts = case when f.take then j.attempts + 1 else j.attempts end,
        updated_at = ${batch.at}
      from successor f
      where j.id = f.id and j.status = f.status and j.run_at is not distinct from f.run_at
      returning j.*, f.slot as after_slot, f.last_seq as lane_last_seq
    ),
    -- A next job made due rather than taken wakes the workers of every node, as an enqueue does.
    woken as (select ${NOTIFY_WORKERS} where exists (select from next where status = 'queued'))
    ${recordSteps}
    select i.slot, i.position,
      i.slot in (select slot from ok) as ok,
      (i.slot, i.position) in (select slot, position from settled) as settled,
      (select count(*) from woken) as woken,
      n.*
    from batch i left join next n on n.after_slot = i.slot and i.position = 0
    order by i.slot, i.position`.execute(db);
  return result.rows;
}

/** PostgreSQL: a batch of settlements is one statement (jobs/queue.ts settleJobs). */
export const postgresSettlement: JobSettlement = Object.freeze({ settleInOneStatement });

/**
 * One insert per table (and set of columns) that gets records. A request's own record is written
 * with its outcome, also when its claim turns out lost (the attempt did happen); a follower's only
 * when the follower is settled (otherwise it runs again, and its attempt number with it). The rows
 * travel as one JSON array per insert; `json_populate_record` turns each element into the table's
 * row type, so the values keep their columns' types.
 */
function recordInserts(rows: readonly SettlementRow[]): RawBuilder<unknown> {
  const groups = new Map<string, { into: string; columns: string[]; rows: Record<string, unknown>[] }>();
  for (const { record, slot, position } of rows) {
    if (!record) continue;
    const columns = Object.keys(record.values).sort();
    const key = `${record.into}(${columns.join(',')})`;
    const group = groups.get(key) ?? { into: record.into, columns, rows: [] };
    group.rows.push({ ...record.values, [SLOT_KEY]: slot, [POSITION_KEY]: position });
    groups.set(key, group);
  }
  if (groups.size === 0) return sql``;
  return sql.join(
    [...groups.values()].map(
      (group, index) => sql`, ${sql.raw(`record_${index}`)} as (
        insert into ${sql.table(group.into)} (${sql.join(group.columns.map((c) => sql.ref(c)))})
        select ${sql.join(group.columns.map((c) => sql`(r.rec).${sql.ref(c)}`))}
        from (
          select json_populate_record(null::${sql.table(group.into)}, e) as rec,
            (e ->> ${SLOT_KEY})::int as slot, (e ->> ${POSITION_KEY})::int as position
          from json_array_elements(${JSON.stringify(group.rows)}::json) e
        ) r
        where (r.position = 0 and r.slot in (select slot from ok))
          or (r.slot, r.position) in (select slot, position from follow)
      )`,
    ),
    sql``,
  );
}

// The keys that tie a record to its job's place in a batch; not columns of any table.
const SLOT_KEY = '__settled_slot';
const POSITION_KEY = '__settled_position';

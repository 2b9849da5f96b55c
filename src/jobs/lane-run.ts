import type { Kysely } from 'kysely';
import type { Database } from '../store/db/schema.js';
import {
  LOST,
  readAhead,
  type ClaimedJob,
  type HandOff,
  type SettleOutcome,
  type Settlement,
} from './queue.js';
import type { SettlementQueue } from './settlement-queue.js';
import { messageOf, type JobLogger, type JobReport } from './job-report.js';
import type { JobContext, JobHandler } from './worker.js';

/** What a lane run needs of its worker (the Worker's own paths, shared with its other jobs). */
export interface LaneWorker {
  readonly id: string;
  readonly db: Kysely<Database>;
  readonly settlements: SettlementQueue;
  readonly log: JobLogger;
  /** Starts telling about one run of a job (its log lines and metrics). */
  report(job: ClaimedJob): JobReport;
  /** The types whose jobs may be run ahead (registered with `runAhead`). */
  readonly aheadTypes: ReadonlySet<string>;
  handler(type: string): JobHandler | undefined;
  stopping(): boolean;
  /** A hand-off of the lane's next job to this worker; none while stopping. */
  handOff(take: HandOff['take']): HandOff | undefined;
  /** Renews the lease of the claim `held()` names until the returned function is called. */
  keepLease(held: () => ClaimedJob): () => void;
  /** Records a claimed job's failure in a transaction of its own; resolves with its outcome. */
  failAlone(job: ClaimedJob, message: string): Promise<SettleOutcome>;
}

/** Jobs run ahead and not yet written, at most: one write settles them all. */
const MAX_RUN = 32;
/** Jobs read ahead at a time. */
const READ_AHEAD = 16;

/** One job that ran, waiting for its settlement to be written; `written` tells its handler how it went. */
interface Ran {
  job: ClaimedJob;
  settlement: Settlement;
  written: Deferred<SettleOutcome>;
  /** Told the outcome once it is known (JobReport). */
  report: JobReport;
}

/**
 * Runs a lane's claimed job, then the jobs waiting behind it, each as soon as the one before has
 * run, while their settlements are written behind them (one write at a time per lane). The jobs
 * behind a claimed head wait (`run_at` null), so no other worker may take them before the head is
 * settled; a write settles the head with the jobs run after it (SettleRequest.followers) and hands
 * this worker the lane's next job, which the jobs run meanwhile follow. Jobs of a lane thus still
 * run one at a time and in order, but a lane waits for its writes only when nothing else is due.
 *
 * It reads ahead only when a write has told it of jobs beyond those read (the lane's last sequence
 * number, with the hand-off): a lane that keeps up costs no read. A run stops reading ahead at a
 * failure (a job to retry holds its lane), at `stop()`, and after MAX_RUN jobs not yet written.
 * When a write hands on another job than the one run next (a claim lost meanwhile), or none, what
 * ran after it is not written: those jobs run again later (at-least-once). A crash loses only
 * writes: the head's lease expires and the lane runs again.
 *
 * Returns a job handed to this worker that is not run ahead (another type), for the caller to run.
 */
export async function runLane(worker: LaneWorker, first: ClaimedJob): Promise<ClaimedJob | undefined> {
  const handlers = new Set<Promise<void>>();
  let next: ClaimedJob | undefined = first;
  let nextClaimed = true;
  let readUpTo = first;
  // The lane's last job known to be enqueued: reading ahead beyond it would find nothing.
  let laneEnd = Number(first.orderingSeq);
  let buffered: ClaimedJob[] = [];
  let halted = false;
  let unsent: Ran[] = [];
  let unsentClaimed = false;
  let writing: Promise<void> | undefined;
  // What the write in flight answered, once it has: taken in at the next turn of the loop.
  let written: { handedOn: HandedOn | undefined } | undefined;
  let leftover: ClaimedJob | undefined;
  // The claim this worker holds and has not seen settled: its lease is renewed.
  let held = first;
  const stopRenewing = worker.keepLease(() => held);

  const submit = () => {
    if (writing || unsent.length === 0 || !unsentClaimed) return;
    writing = write(worker, unsent).then((handedOn) => {
      // The job handed on is this worker's claim from now: its lease is renewed at once, not when
      // the loop next looks, for a run of jobs read ahead can outlast a lease (a slow receiver).
      if (handedOn) held = handedOn.job;
      written = { handedOn };
    });
    unsent = [];
    unsentClaimed = false;
  };
  const drop = (reason: string) => {
    if (unsent.length > 0)
      worker.log.warn(
        { jobIds: unsent.map((ran) => ran.job.id), reason },
        'jobs run ahead were not settled; they will run again',
      );
    for (const ran of unsent) ran.written.resolve(LOST);
    unsent = [];
    buffered = [];
  };

  /** Takes in what a write answered: the claim it handed on decides what of the run is this worker's. */
  const takeIn = ({ handedOn }: { handedOn: HandedOn | undefined }) => {
    writing = undefined;
    written = undefined;
    const taken = handedOn?.job;
    if (handedOn) laneEnd = Math.max(laneEnd, handedOn.laneLastSeq);
    if (!taken) {
      drop('the lane’s next job was not handed to this worker');
      if (!nextClaimed) next = undefined;
      halted = true;
    } else if (unsent[0]?.job.id === taken.id) {
      // The job run next is this worker's now: its claim covers what ran after it.
      unsent[0].job = taken;
      unsentClaimed = true;
    } else if (unsent.length === 0 && next?.id === taken.id) {
      // The job about to run is the one handed on: it runs under that claim.
      next = taken;
      nextClaimed = true;
    } else {
      drop('the lane’s next job was not the one run next');
      next = undefined;
      if (worker.aheadTypes.has(taken.type)) {
        next = taken;
        nextClaimed = true;
        readUpTo = taken;
        halted = false;
      } else {
        leftover = taken;
        halted = true;
      }
    }
  };

  try {
    for (;;) {
      // A write that has answered is taken in before anything else runs: jobs run on only while
      // this worker holds the lane.
      if (written) takeIn(written);
      if (!next && !halted && !worker.stopping() && unsent.length < MAX_RUN) {
        if (buffered.length === 0 && laneEnd > Number(readUpTo.orderingSeq)) {
          buffered = await readAhead(worker.db, readUpTo, [...worker.aheadTypes], READ_AHEAD).catch(
            (error: unknown) => {
              worker.log.warn({ err: error, jobId: readUpTo.id }, 'could not read ahead in a lane');
              halted = true;
              return [];
            },
          );
          readUpTo = buffered.at(-1) ?? readUpTo;
          // Fewer than asked: that was all, for now; the next hand-off tells of more.
          if (buffered.length < READ_AHEAD) laneEnd = Number(readUpTo.orderingSeq);
        }
        next = buffered.shift();
        nextClaimed = false;
      }
      // Read before a write is sent: the write may hand the next job on, and a read after it would
      // see that job taken rather than waiting.
      submit();
      // Stopping began while reading: a write sent now hands nothing on (the lane's next job is due
      // for other workers), so a job read ahead is no longer this worker's to run.
      if (next && !nextClaimed && worker.stopping()) {
        next = undefined;
        buffered = [];
      }
      if (next) {
        const ran = await attempt(worker, next, handlers);
        if (unsent.length === 0) unsentClaimed = nextClaimed;
        unsent.push(ran);
        next = undefined;
        // A job to retry holds its lane: nothing after it runs.
        if (ran.settlement.error !== null) halted = true;
        continue;
      }
      if (!writing) break;
      await writing;
    }
  } finally {
    stopRenewing();
    // Nothing is left unsent when the loop ends; were it otherwise, its handlers would wait forever.
    for (const ran of unsent) ran.written.resolve(LOST);
    await Promise.allSettled([...handlers]);
  }
  return leftover;
}

/**
 * Runs one job's handler; resolves once the handler has settled it (or returned, or thrown), while
 * the handler may still wait to learn how its settlement was written.
 */
function attempt(worker: LaneWorker, job: ClaimedJob, handlers: Set<Promise<void>>): Promise<Ran> {
  const written = deferred<SettleOutcome>();
  const report = worker.report(job);
  return new Promise((resolve) => {
    let reported = false;
    const ran = (settlement: Settlement) => {
      if (reported) return;
      reported = true;
      // A write that fails rejects `written`; write() then tells the report what became of the job.
      void written.promise.then(
        (outcome) => report.ended(outcome, settlement.error),
        // Told there instead (and the rejection handled here, or it would end the process).
        () => undefined,
      );
      resolve({ job, settlement, written, report });
    };
    const runsAhead = () =>
      Promise.reject(new Error(`a job of type ${job.type} (run ahead) settles through settle()`));
    const context: JobContext = {
      workerId: worker.id,
      complete: runsAhead,
      fail: runsAhead,
      settle: (settlement) => {
        ran(settlement);
        return written.promise;
      },
    };
    const handler = worker.handler(job.type);
    const running = (async () => {
      if (!handler) throw new Error(`no handler for job type ${job.type}`);
      await handler(job, context);
    })().then(
      () => ran({ error: null }),
      (error: unknown) => ran({ error: messageOf(error) }),
    );
    handlers.add(running);
    void running.finally(() => handlers.delete(running));
  });
}

/** The lane's next job, handed to this worker by a write, and the lane's last job as it saw it. */
interface HandedOn {
  job: ClaimedJob;
  laneLastSeq: number;
}

/**
 * Writes a run: its first job (claimed) settled with the others as followers. Resolves with the
 * lane's next job when it was handed to this worker. When the write fails, the first job is failed
 * on its own (retried later, holding the lane) and the others stay waiting behind it.
 */
async function write(worker: LaneWorker, run: readonly Ran[]): Promise<HandedOn | undefined> {
  const [head, ...followers] = run as [Ran, ...Ran[]];
  let taken: HandedOn | undefined;
  const handOff = worker.handOff((job, laneLastSeq) => (taken = { job, laneLastSeq }));
  try {
    const settled = await worker.settlements.settle({
      job: head.job,
      settlement: head.settlement,
      followers: followers.map(({ job, settlement }) => ({ job, settlement })),
      handOff,
    });
    head.written.resolve(settled.outcome);
    followers.forEach((ran, index) => ran.written.resolve(settled.followers[index] ?? LOST));
    return taken;
  } catch (error) {
    head.written.reject(error);
    for (const ran of followers) ran.written.resolve(LOST);
    const message = messageOf(error);
    head.report.ended(await worker.failAlone(head.job, message), message);
    return undefined;
  }
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A handler need not wait for its outcome: a rejection nobody awaits is not an error here.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

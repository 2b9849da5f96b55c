import type { Kysely } from 'kysely';
import {
  settleJobs,
  type ClaimedJob,
  type HandOff,
  type Settlement,
  type SettleOutcome,
} from '../../src/jobs/queue.js';
import type { SqlDialect } from '../../src/store/db/dialect.js';
import type { Database } from '../../src/store/db/schema.js';

/**
 * Settles one claimed job through `settleJobs` (the worker's path, which batches), throwing what kept
 * it from being written: the one-job form the queue tests drive step by step.
 */
export async function settleJob(
  db: Kysely<Database>,
  dialect: SqlDialect,
  job: ClaimedJob,
  settlement: Settlement,
  now: Date,
  options: { random?: () => number; handOff?: HandOff | undefined } = {},
): Promise<SettleOutcome> {
  const [result] = await settleJobs(
    db,
    dialect,
    [{ job, settlement, handOff: options.handOff }],
    now,
    options,
  );
  if (!result) throw new Error('the settlement was not written');
  if (!result.ok) throw result.error;
  return result.outcome;
}

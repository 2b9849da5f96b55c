import type { Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import { VersionMismatch } from '../../base/errors.js';
import { claimJobById, completeJob, failJob, type ClaimedJob } from '../../jobs/queue.js';
import type { Worker } from '../../jobs/worker.js';
import { writeTransaction } from '../../store/db/dialect.js';
import type { Database } from '../../store/db/schema.js';
import { replaceMainFile } from '../changes/new-main-file.js';
import { mainFileBytes } from '../changes/new-main-file.js';
import { sealBytes, tenantDefaultLevel } from './seal.js';
import { documentTrail } from '../audit/document-trail.js';
import { trailFiles } from '../audit/embedded-trail.js';
import { SEAL_ON_COMPLETE_JOB, wakeCompletionMails, type SealPayload } from '../sharing/completion.js';

/** The request's claim: longer than a seal takes with every remote call at its time-out. */
const REQUEST_LEASE_MS = 5 * 60_000;

/**
 * Runs a queued seal on completion now, in the request that completed the document (Contract: "sign
 * and seal calls return after the new file exists"). The signature is committed already: a seal that
 * fails is left to the job queue (retried with backoff) and never turns the signing call into an
 * error. Answers whether the seal is in the file.
 */
export async function sealOnCompleteNow(deps: Deps, jobId: string, requestId: string): Promise<boolean> {
  const job = await claimJobById(deps.db, {
    id: jobId,
    workerId: `request/${requestId}`,
    now: deps.clock.now(),
    leaseMs: REQUEST_LEASE_MS,
  });
  // A worker has it already (the request came back late): it seals and the answer says so.
  if (!job) return false;
  try {
    return await sealCompleted(deps, job, (trx) => completeJob(trx, job, deps.clock.now()));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await writeTransaction(deps.db, deps.dialect, (trx) =>
      failJob(trx, job, message, deps.clock.now()),
    ).catch(() => {
      // Nothing to add: the claim's lease runs out and a worker takes the job again.
    });
    return false;
  }
}

/** Gives a worker the seals on completion that their requests did not finish. */
export function registerSigningJobs(worker: Worker, deps: Deps): void {
  worker.register(SEAL_ON_COMPLETE_JOB, async (job, context) => {
    await sealCompleted(deps, job, (trx) => context.complete(trx));
  });
}

/**
 * The seal itself: the completed version's main file sealed, the seal carrying its audit trail
 * (core/audit/embedded-trail.ts), with the organisation key at the tenant's default level (remote calls first, no transaction open), then one short transaction that
 * checks the version, makes the sealed file the main file and settles the job. A document deleted or
 * changed since its completion is not sealed (the job is done: there is nothing left to seal).
 */
async function sealCompleted(
  deps: Deps,
  job: ClaimedJob,
  settle: (trx: Kysely<Database>) => Promise<unknown>,
): Promise<boolean> {
  const payload = job.payload as unknown as SealPayload;
  const doc = await deps.db
    .selectFrom('documents')
    .selectAll()
    .where('id', '=', payload.documentId)
    .executeTakeFirst();
  const nothingToSeal = async (): Promise<false> => {
    await writeTransaction(deps.db, deps.dialect, async (trx) => {
      await settle(trx);
      await wakeCompletionMails(trx, payload.documentId, payload.version, deps.clock.now());
    });
    return false;
  };
  if (!doc || doc.deleted_at !== null || doc.version !== payload.version) return nothingToSeal();
  const { file: previous, bytes } = await mainFileBytes(deps, doc);
  // The document proves itself (issue 27): its audit trail is in the seal's own revision, which the
  // seal covers, with nothing between the users' signatures and the seal (issue 38).
  const trail = await documentTrail(deps.db, doc, deps.clock.now());
  const sealed = await sealBytes(deps, {
    operation: 'seal',
    pdf: bytes,
    associatedFiles: await trailFiles(trail, deps.clock.now()),
    signerName: 'Organisation seal',
    level: await tenantDefaultLevel(deps, doc.tenant_id),
    reason: 'Completed',
  });
  const now = deps.clock.now();
  try {
    await writeTransaction(deps.db, deps.dialect, async (trx) => {
      await replaceMainFile(trx, deps, {
        doc,
        previous,
        bytes: sealed.pdf,
        by: payload.by,
        expectedVersion: payload.version,
        signed: true,
        activityType: 'documentSealed',
        reason: 'sealed',
        data: { levelAchieved: sealed.levelAchieved, fellBack: sealed.fellBack, onComplete: true },
        archive: sealed.archive,
        now,
      });
      await settle(trx);
      // The completion messages waited for this file.
      await wakeCompletionMails(trx, doc.id, payload.version, now);
    });
  } catch (error) {
    // Changed between the read and the commit: the sealed file is discarded, as the version says.
    if (error instanceof VersionMismatch) return nothingToSeal();
    throw error;
  }
  return true;
}

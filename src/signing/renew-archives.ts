import { performance } from 'node:perf_hooks';
import type { Deps } from '../core/deps.js';
import type { DocumentRow } from '../core/access/document-access.js';
import { replaceMainFile } from '../core/changes/new-main-file.js';
import { VersionMismatch } from '../base/errors.js';
import { timestampAuthority } from '../core/signing/seal.js';
import { renewArchive } from '../pdf/archive-timestamp.js';
import { writeTransaction } from '../store/db/dialect.js';
import { mainFileBytes } from '../core/changes/new-main-file.js';

/** Documents renewed per run at most: the rest are still due at the next run. */
const BATCH = 50;
const DAY_MS = 86_400_000;

/** What one run of the renewal did. */
export interface RenewalRun {
  renewed: string[];
  /** Documents whose renewal failed this time, with why (they stay due). */
  failed: { documentId: string; message: string }[];
}

/**
 * Keeps B-LTA documents provable (ETSI EN 319 142-1, the LTA cycle): every document whose newest
 * archive timestamp stops proving it within LTA_RENEW_DAYS (its TSA certificate expires, or its
 * algorithms are weak) gets fresh validation data for that timestamp and a new document timestamp,
 * as an incremental update (renewArchive), outside any transaction; then one short transaction
 * makes it the main file (the old one stays a revision: GET /documents/:id/revisions), audited as
 * `documentArchiveRenewed`, compare-and-set on the version it was read at (a document changed
 * meanwhile is left for the next run). Needs TSA_URL; without it nothing is renewed.
 */
export async function renewDueArchives(deps: Deps): Promise<RenewalRun> {
  const run: RenewalRun = { renewed: [], failed: [] };
  const tsaUrl = deps.config.tsaUrl;
  if (!tsaUrl) return run;
  const now = deps.clock.now();
  const due = await deps.db
    .selectFrom('documents')
    .selectAll()
    .where(
      'archive_expires_at',
      '<=',
      new Date(now.getTime() + deps.config.ltaRenewDays * DAY_MS).toISOString(),
    )
    .where('deleted_at', 'is', null)
    .orderBy('archive_expires_at')
    .limit(BATCH)
    .execute();
  for (const doc of due) {
    try {
      if (await renewOne(deps, doc, tsaUrl)) run.renewed.push(doc.id);
    } catch (error) {
      run.failed.push({
        documentId: doc.id,
        message: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return run;
}

async function renewOne(deps: Deps, doc: DocumentRow, tsaUrl: string): Promise<boolean> {
  const started = performance.now();
  const { file: previous, bytes } = await mainFileBytes(deps, doc);
  const renewed = await renewArchive({
    pdf: bytes,
    tsa: timestampAuthority(deps, tsaUrl),
    revocation: (chains, at) => deps.revocation.collect(chains, at),
    // Revocation is about the world's time, as in signPdf (the clock schedules; it does not age OCSP answers).
    now: new Date(),
  });
  deps.metrics.signatureMade('archive', 'B-LTA', (performance.now() - started) / 1000);
  const current = doc.archive_expires_at ? new Date(doc.archive_expires_at) : undefined;
  if (current && renewed.archive.expiresAt <= current) {
    throw new Error(
      `The TSA's certificate ends ${renewed.archive.expiresAt.toISOString()}, no later than the document's archive timestamp (${current.toISOString()}): renewing would not extend its proof; configure a TSA whose certificate lasts longer`,
    );
  }
  const now = deps.clock.now();
  try {
    await writeTransaction(deps.db, deps.dialect, (trx) =>
      replaceMainFile(trx, deps, {
        doc,
        previous,
        bytes: renewed.pdf,
        by: {
          tenantId: doc.tenant_id,
          name: 'Signery archive renewal',
          requestId: `archive-renewal/${doc.id}`,
        },
        expectedVersion: doc.version,
        signed: true,
        activityType: 'documentArchiveRenewed',
        reason: 'archiveRenewed',
        data: {
          timestampTime: renewed.archive.genTime.toISOString(),
          provesUntil: renewed.archive.expiresAt.toISOString(),
          ...(doc.archive_expires_at ? { previouslyProvenUntil: doc.archive_expires_at } : {}),
        },
        archive: renewed.archive,
        now,
      }),
    );
  } catch (error) {
    // Changed between the read and the commit: the renewed file is discarded; the next run renews
    // what the document is now.
    if (error instanceof VersionMismatch) return false;
    throw error;
  }
  return true;
}

import type { Kysely } from 'kysely';
import type { DocumentRow } from '../access/document-access.js';
import { enqueue } from '../../jobs/queue.js';
import type { Database } from '../../store/db/schema.js';

/**
 * The first page of a document's PDF drawn ahead of its recipients' visit (GET /share/document/preview):
 * inviting someone queues it, so that the first person to open the link on a slow phone finds the
 * image ready rather than waiting for it to be drawn. Best effort: one attempt, and a page the server
 * does not draw is simply not there (the signer page then shows the PDF as before).
 */
export const PREVIEW_AHEAD_JOB = 'document.previewAhead';

export interface PreviewAheadPayload {
  tenantId: string;
  fileId: string;
}

/** Inside the transaction that invites recipients to `doc`: its first page drawn once that commits. */
export async function queuePreviewAhead(trx: Kysely<Database>, doc: DocumentRow, now: Date): Promise<void> {
  if (!doc.main_file_id) return;
  const payload: PreviewAheadPayload = { tenantId: doc.tenant_id, fileId: doc.main_file_id };
  await enqueue(trx, { type: PREVIEW_AHEAD_JOB, payload: { ...payload }, now, maxAttempts: 1 });
}

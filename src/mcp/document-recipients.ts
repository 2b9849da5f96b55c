import type { Kysely } from 'kysely';
import { NOT_REQUIRED, owesAction, PENDING, shareOptions } from '../core/sharing/share-types.js';
import type { Database } from '../store/db/schema.js';

/** A recipient of a document as get_document tells a model: what they were asked, and what they still owe. */
export interface DocumentRecipient {
  recipient: string;
  purpose: string;
  /** The share's status: active (their turn), waiting (after earlier recipients), done, rejected, … */
  status: string;
  /** In words: what they must still do, or why nothing. */
  owes: string;
  /** The fields assigned to them, while they owe their action: what the signer page will ask them for. */
  fields: { fieldId: string; kind: string; pages: number[]; required: boolean }[];
  actedAt: string | null;
  reason: string | null;
}

const NOTHING_OWED: Record<string, string> = {
  done: 'nothing: done',
  rejected: 'nothing: rejected the document',
  cancelled: 'nothing: their share was cancelled',
  expired: 'nothing: their share expired',
  delegated: 'nothing: delegated to someone else',
  [NOT_REQUIRED]: 'nothing: enough others of their sign entity signed',
};

/**
 * The recipients of a document, in the order they act (position, then when they were added), with
 * what each still owes (issue 42, Deliver 2: "read one document … what each still owes"). The caller
 * has already loaded the document as visible to the actor; a share made for a folder is not here.
 */
export async function documentRecipients(
  db: Kysely<Database>,
  documentId: string,
): Promise<DocumentRecipient[]> {
  const rows = await db
    .selectFrom('shares')
    .select(['share_to', 'purpose', 'status', 'options', 'acted_at', 'reason'])
    .where('document_id', '=', documentId)
    .orderBy('position')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => {
    const pending = PENDING.includes(row.status);
    const action = owesAction(row);
    const owes = !pending
      ? (NOTHING_OWED[row.status] ?? `nothing: ${row.status}`)
      : !action
        ? `nothing required: may ${row.purpose}`
        : row.status === 'waiting'
          ? `${row.purpose}, after the recipients before them`
          : `${row.purpose}, now`;
    const fields = pending && action ? shareOptions(row).signatureFields : [];
    return {
      recipient: row.share_to,
      purpose: row.purpose,
      status: row.status,
      owes,
      fields: fields.map((field) => ({
        fieldId: typeof field.fieldId === 'string' ? field.fieldId : '',
        kind:
          typeof field.subtype === 'string'
            ? field.subtype
            : typeof field.type === 'string'
              ? field.type
              : 'signature',
        pages: Array.isArray(field.pages) ? field.pages.filter((page) => typeof page === 'number') : [],
        required: field.required === true,
      })),
      actedAt: row.acted_at,
      reason: row.reason,
    };
  });
}

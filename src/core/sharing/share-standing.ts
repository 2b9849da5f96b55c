import type { Kysely } from 'kysely';
import type { Database } from '../../store/db/schema.js';
import { ACTION_PURPOSES, PENDING, type ShareRow } from './share-types.js';

/**
 * What a credential derived from a share may still do (DESIGN "Decided this round": a share's link
 * has no power once its share has ended). One rule for every such credential: the share's links, the
 * recipient sessions an unlock opened, and the unlock itself, so that they all end together.
 * - `live`: the share owes its action, waits its turn, or reads (a view share) — the recipient endpoints;
 * - `completed`: the recipient acted (`done`) less than RECIPIENT_DOWNLOAD_DAYS ago: only the download
 *   of what they signed (GET /share/signed, and those files by /files/loadFile/hash);
 * - `ended`: anything else — expired (its `validUntil` passed, whether the expiry job ran or not),
 *   cancelled, rejected, delegated away, not required, withdrawn, its document deleted (even softly),
 *   or acted on longer ago than the download period: 401 UNAUTHENTICATED on the API, a page saying so
 *   at /s/….
 *
 * ```ts
 * shareStanding(share, { documentDeleted: doc.deleted_at !== null, now, downloadDays: 30 });
 * ```
 */
export type ShareStanding = 'live' | 'completed' | 'ended';

export function shareStanding(
  share: Pick<ShareRow, 'status' | 'valid_until' | 'acted_at'>,
  options: { documentDeleted: boolean; now: Date; downloadDays: number },
): ShareStanding {
  const { now } = options;
  // spec Share `validUntil`: "optional expiry of the share link": the link's, whatever the share did.
  if (options.documentDeleted || (share.valid_until !== null && new Date(share.valid_until) <= now))
    return 'ended';
  if (PENDING.includes(share.status)) return 'live';
  if (share.status === 'done' && share.acted_at !== null) {
    const until = new Date(share.acted_at).getTime() + options.downloadDays * 86_400_000;
    return now.getTime() < until ? 'completed' : 'ended';
  }
  return 'ended';
}

/** Until when a completed share's recipient may download what they signed. */
export function downloadableUntil(share: Pick<ShareRow, 'acted_at'>, downloadDays: number): Date | undefined {
  return share.acted_at === null
    ? undefined
    : new Date(new Date(share.acted_at).getTime() + downloadDays * 86_400_000);
}

/**
 * The files a recipient who acted on a share may download (ids, in revision order): the document's
 * main file as its revisions recorded it, up to the start of the next round. A later round (a new
 * POST /share with an action purpose) signs on a file that is not theirs, so its revisions are not
 * theirs to read; the seal and later signatures of their own round are.
 */
export async function signedFilesOf(
  db: Kysely<Database>,
  share: Pick<ShareRow, 'document_id' | 'acted_at'>,
): Promise<string[]> {
  if (share.acted_at === null) return [];
  const next = await db
    .selectFrom('shares')
    .select((eb) => eb.fn.min<string>('created_at').as('at'))
    .where('document_id', '=', share.document_id)
    .where('purpose', 'in', [...ACTION_PURPOSES])
    .where('delegated_from', 'is', null)
    .where('created_at', '>', share.acted_at)
    .executeTakeFirst();
  const revisions = await db
    .selectFrom('document_revisions')
    .select('file_id')
    .where('document_id', '=', share.document_id)
    .$call((q) => (next?.at ? q.where('created_at', '<', next.at) : q))
    .orderBy('revision')
    .execute();
  return revisions.map((r) => r.file_id);
}

/** The files a share's recipient who acted may download (signedFilesOf), by the share's id. */
export async function signedFilesOfShare(db: Kysely<Database>, shareId: string): Promise<string[]> {
  const share = await db
    .selectFrom('shares')
    .select(['document_id', 'acted_at'])
    .where('id', '=', shareId)
    .executeTakeFirst();
  return share ? signedFilesOf(db, share) : [];
}

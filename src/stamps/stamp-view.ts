import type { Kysely } from 'kysely';
import type { Database } from '../store/db/schema.js';
import type { StampRow } from '../core/stamps/stamp-access.js';
import { oneView } from '../core/views/one-view.js';
import { loginNames } from '../core/identity/user-view.js';

/** A stamp as the API shows it (spec Stamp: fields beyond its id are ours to choose; DESIGN Contract). */
export interface StampView {
  id: string;
  name: string;
  scope: StampRow['scope'];
  /** The owner's login name (personal stamps), else null. */
  owner: string | null;
  organization: string;
  /** The image's file id. */
  file: string;
  createDate: string;
  modifyDate: string;
  _version: number;
}

/** Shapes stamps for an answer, looking their owners' names up in one query. */
export async function stampViews(db: Kysely<Database>, stamps: StampRow[]): Promise<StampView[]> {
  const names = await loginNames(
    db,
    stamps.flatMap((s) => (s.owner_id ? [s.owner_id] : [])),
  );
  return stamps.map((stamp) => ({
    id: stamp.id,
    name: stamp.name,
    scope: stamp.scope,
    owner: stamp.owner_id ? (names.get(stamp.owner_id) ?? stamp.owner_id) : null,
    organization: stamp.organization_id,
    file: stamp.file_id,
    createDate: stamp.created_at,
    modifyDate: stamp.updated_at,
    _version: stamp.version,
  }));
}

export function stampView(db: Kysely<Database>, stamp: StampRow): Promise<StampView> {
  return oneView(stampViews, db, stamp);
}

import type { Kysely } from 'kysely';
import { oneView } from '../core/views/one-view.js';
import { loginNames } from '../core/identity/user-view.js';
import { enumRecords, type EnumRecord, type EnumRow } from '../core/access/enum-access.js';
import type { Database } from '../store/db/schema.js';

/** An enum as the API shows it (spec: Other resources; the shape is ours, DESIGN Contract). */
export interface EnumView {
  id: string;
  name: string;
  label: string | null;
  /** The organization's id: an enum belongs to its creator's organization. */
  organization: string;
  /** The creator's login name (their id when the account is gone). */
  creator: string;
  records: EnumRecord[];
  createDate: string;
  modifyDate: string;
  _version: number;
}

/** Shapes enums for an answer, looking their creators' names up in one query. */
export async function enumViews(db: Kysely<Database>, rows: EnumRow[]): Promise<EnumView[]> {
  const names = await loginNames(
    db,
    rows.map((r) => r.created_by),
  );
  return rows.map((row) => ({
    id: row.id,
    name: row.name,
    label: row.label,
    organization: row.organization_id,
    creator: names.get(row.created_by) ?? row.created_by,
    records: enumRecords(row),
    createDate: row.created_at,
    modifyDate: row.updated_at,
    _version: row.version,
  }));
}

export function enumView(db: Kysely<Database>, row: EnumRow): Promise<EnumView> {
  return oneView(enumViews, db, row);
}

import type { Kysely, Selectable } from 'kysely';
import type { Actor } from './actor.js';
import { Forbidden, NotFound } from '../../base/errors.js';
import { readJson } from '../../store/db/json.js';
import type { Database, EnumTable } from '../../store/db/schema.js';
import { isAdmin, isLite } from './roles.js';

export type EnumRow = Selectable<EnumTable>;

/** One value of an enum, as stored and as shown. */
export interface EnumRecord {
  value: string;
  label: string;
  /** File id of a POST /files/photo upload (spec Files usage rule 1), or null. */
  photo: string | null;
  /** File ids of POST /files/saveFile uploads (spec Files usage rule 1: other files in enums). */
  files: string[];
}

export function enumRecords(row: Pick<EnumRow, 'records'>): EnumRecord[] {
  return readJson<EnumRecord[]>(row.records, []);
}

/**
 * Who does what with enums (spec: Other resources; the rule is ours, stated in the OpenAPI text):
 * - an enum belongs to the organization of the user who created it, and every member of that
 *   organization reads it (lite roles included: they fill in forms that use it);
 * - members with a full role (`user` or an administrator role) create enums; lite roles (`read`,
 *   `prepare`, `sign`) do not;
 * - its creator and the administrators of its organization change and delete it.
 * Other organizations' enums do not exist for the caller (Contract: never leak existence).
 */
export function assertMayCreateEnum(actor: Actor): void {
  if (isLite(actor.role)) throw new Forbidden(`The role ${actor.role} may read enums but not create them`);
}

export function mayChangeEnum(actor: Actor, row: EnumRow): boolean {
  return row.created_by === actor.userId || isAdmin(actor.role);
}

/** An enum of the caller's organization, by name, or undefined. */
export async function findVisibleEnum(
  db: Kysely<Database>,
  actor: Actor,
  name: string,
): Promise<EnumRow | undefined> {
  return db
    .selectFrom('enums')
    .selectAll()
    .where('tenant_id', '=', actor.tenantId)
    .where('organization_id', '=', actor.organizationId)
    .where('name', '=', name)
    .executeTakeFirst();
}

/** An enum of the caller's organization, by name. */
export async function loadVisibleEnum(db: Kysely<Database>, actor: Actor, name: string): Promise<EnumRow> {
  const row = await findVisibleEnum(db, actor, name);
  if (!row) throw new NotFound('No such enum');
  return row;
}

/** An enum the caller may change: unseen is 404, seen but neither theirs nor administered by them 403. */
export async function loadChangeableEnum(db: Kysely<Database>, actor: Actor, name: string): Promise<EnumRow> {
  const row = await loadVisibleEnum(db, actor, name);
  if (!mayChangeEnum(actor, row)) {
    throw new Forbidden('Only its creator and the organization’s administrators may change an enum');
  }
  return row;
}

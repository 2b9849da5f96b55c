import type { Kysely, Selectable, SelectQueryBuilder } from 'kysely';
import type { Database } from './schema.js';

/** The tables whose rows have an `id` and belong to one tenant (`tenant_id`). */
export type TenantRowTable = {
  [T in keyof Database]: Database[T] extends { id: string; tenant_id: string } ? T : never;
}[keyof Database];

/**
 * The row of `table` with this id in this tenant, or undefined: another tenant's row is as good as
 * none. The caller decides what else makes the row theirs to see.
 *
 * ```ts
 * const stamp = await findInTenant(db, 'stamps', actor.tenantId, id);
 * if (!stamp || !maySeeStamp(actor, stamp)) throw new NotFound('No such stamp');
 * ```
 */
export async function findInTenant<T extends TenantRowTable>(
  db: Kysely<Database>,
  table: T,
  tenantId: string,
  id: string,
): Promise<Selectable<Database[T]> | undefined> {
  // Kysely types columns for a table named by a literal, not by a type parameter: the query is typed
  // for a stand-in table with the two columns every TenantRowTable has, the row as `table`'s.
  const rows = db as unknown as Kysely<{ row: { id: string; tenant_id: string } }>;
  const row = await rows
    .selectFrom(table as unknown as 'row')
    .selectAll()
    .where('id', '=', id)
    .where('tenant_id', '=', tenantId)
    .executeTakeFirst();
  return row as Selectable<Database[T]> | undefined;
}

/**
 * A LIKE pattern for rows containing `text`, lower-cased, its own wildcards matched literally; the
 * statement declares the escape character (`like ${pattern} escape '\\'`) for SQLite.
 */
export function containsPattern(text: string): string {
  return `%${text.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** What a page of rows is cut from: its first row's position and its size, each optional. */
export interface PageRequest {
  from?: number | undefined;
  size?: number | undefined;
}

/** The part of a query that cuts and reads a page. */
interface Listing<Row> {
  offset(offset: number): Listing<Row>;
  limit(limit: number): Listing<Row>;
  execute(): Promise<Row[]>;
}

/**
 * One page of a query's rows and how many rows it has in all, read together. `list` selects and
 * orders the rows from the query; the page starts at `from` (0) and holds `size` rows (`defaultSize`).
 *
 * ```ts
 * const page = await countedPage(query, (q) => q.selectAll().orderBy('name').orderBy('id'), options, 20);
 * ```
 */
export async function countedPage<DB, TB extends keyof DB, Row>(
  query: SelectQueryBuilder<DB, TB, object>,
  list: (query: SelectQueryBuilder<DB, TB, object>) => Listing<Row>,
  page: PageRequest,
  defaultSize: number,
): Promise<{ total: number; from: number; size: number; rows: Row[] }> {
  const from = page.from ?? 0;
  const size = page.size ?? defaultSize;
  const [count, rows] = await Promise.all([
    // Typed by hand: Kysely does not follow a selection through the type parameters of this function.
    query.select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow() as Promise<{ n: unknown }>,
    list(query).offset(from).limit(size).execute(),
  ]);
  return { total: Number(count.n), from, size, rows };
}

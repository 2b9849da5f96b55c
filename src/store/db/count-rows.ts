import type { SelectQueryBuilder } from 'kysely';

/**
 * How many rows a query matches: `select count(*)` over its tables and conditions (PostgreSQL's
 * bigint count arrives as text; this is always a number).
 *
 * ```ts
 * const total = await countRows(db.selectFrom('audit_log').where(where));
 * ```
 */
export async function countRows<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
): Promise<number> {
  const { count } = await query
    .select((eb) => eb.fn.countAll().as('count'))
    // Over generic tables Kysely cannot name the selection's key: it is the one selected here.
    .$castTo<{ count: number | string | bigint }>()
    .executeTakeFirstOrThrow();
  return Number(count);
}

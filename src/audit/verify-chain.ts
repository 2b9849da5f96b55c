import type { Kysely } from 'kysely';
import type { Database } from '../store/db/schema.js';
import { chainedFieldsOf, chainHash, GENESIS } from '../core/audit/chain.js';

export interface ChainBreak {
  tenantId: string;
  /** The first record whose link or content does not match. */
  recordId: string;
  seq: number;
  reason: 'content changed' | 'previous record missing or changed' | 'records after the chain head';
}

export interface ChainVerification {
  tenants: number;
  records: number;
  /** The first break of each tenant whose chain is broken. */
  broken: ChainBreak[];
}

const PAGE = 1000;

/**
 * Recomputes every tenant's audit chain (`signery audit verify`): a changed record fails its own hash,
 * a removed or reordered one fails the next record's link, and a removed tail no longer reaches the
 * chain head. Reads in keyset pages, so it runs in constant memory.
 *
 * ```ts
 * const { broken } = await verifyAuditChain(db);
 * if (broken.length > 0) console.error(`first broken record: ${broken[0].recordId}`);
 * ```
 */
export async function verifyAuditChain(db: Kysely<Database>): Promise<ChainVerification> {
  const heads = await db.selectFrom('audit_heads').selectAll().execute();
  const result: ChainVerification = { tenants: heads.length, records: 0, broken: [] };
  for (const head of heads) {
    let previous = GENESIS;
    let afterSeq = -1;
    let broken: ChainBreak | undefined;
    for (;;) {
      const rows = await db
        .selectFrom('audit_log')
        .selectAll()
        .where('tenant_id', '=', head.tenant_id)
        .where('seq', '>', afterSeq)
        .orderBy('seq')
        .limit(PAGE)
        .execute();
      for (const row of rows) {
        result.records += 1;
        if (broken) continue;
        const at = { tenantId: head.tenant_id, recordId: row.id, seq: Number(row.seq) };
        if (row.prev_hash !== previous) {
          broken = { ...at, reason: 'previous record missing or changed' };
          continue;
        }
        const expected = chainHash(previous, chainedFieldsOf(row));
        if (expected !== row.hash) {
          broken = { ...at, reason: 'content changed' };
          continue;
        }
        previous = row.hash;
      }
      const last = rows.at(-1);
      if (!last) break;
      afterSeq = Number(last.seq);
    }
    if (!broken && previous !== head.last_hash) {
      broken = {
        tenantId: head.tenant_id,
        recordId: '(end of chain)',
        seq: afterSeq,
        reason: 'records after the chain head',
      };
    }
    if (broken) result.broken.push(broken);
  }
  return result;
}

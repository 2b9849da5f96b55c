import { readJson } from '../../src/store/db/json.js';
import type { TestServer } from './server.js';

export interface AuditRecord {
  activityType: string;
  data: Record<string, unknown>;
}

/**
 * What the audit log holds of one object (a document, a webhook, …): its records in the order they
 * were written, only those of `activityType` when given, their data parsed.
 */
export async function auditOf(
  server: TestServer,
  objectId: string,
  activityType?: string,
): Promise<AuditRecord[]> {
  let query = server.app.deps.db
    .selectFrom('audit_log')
    .select(['activity_type', 'data'])
    .where('object_id', '=', objectId);
  if (activityType) query = query.where('activity_type', '=', activityType);
  const records = await query.orderBy('seq').execute();
  return records.map((r) => ({ activityType: r.activity_type, data: readJson(r.data, {}) }));
}

import { readJson } from '../../src/store/db/json.js';
import assert from 'node:assert/strict';
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

/** The consentAccepted records of a document, as an administrator reads them (POST /logs/search). */
export async function consentRecords(
  server: TestServer,
  documentId: string,
): Promise<{ time: string; actorId: string; data: Record<string, unknown> }[]> {
  const found = await server.api('POST', '/logs/search', {
    token: await server.adminToken(),
    body: {
      logsQuery: {
        query: {
          filter: [
            { type: 'term', field: 'activityType', value: 'consentAccepted' },
            { type: 'term', field: 'objectId', value: documentId },
          ],
        },
        size: 50,
      },
    },
  });
  assert.equal(found.status, 200, found.text);
  return found.body.results as { time: string; actorId: string; data: Record<string, unknown> }[];
}

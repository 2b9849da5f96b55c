import type { Kysely } from 'kysely';
import { ValidationError } from '../../base/errors.js';
import type { Database } from '../../store/db/schema.js';

/** Built-in workflow (Contract: `wf_archive`); the built-in definition is core/documents/definition-access.ts's. */
export const DEFAULT_WORKFLOW = 'wf_archive';

/**
 * Workflows are data: the built-in one always exists, tenants add more. A name that exists in
 * neither is a validation error naming the field.
 */
export async function assertWorkflowExists(
  db: Kysely<Database>,
  tenantId: string,
  name: string,
  field: string,
) {
  if (name === DEFAULT_WORKFLOW) return;
  const found = await db
    .selectFrom('workflows')
    .select('name')
    .where('tenant_id', '=', tenantId)
    .where('name', '=', name)
    .executeTakeFirst();
  if (!found) throw new ValidationError(`${field}`, 'must name a workflow');
}

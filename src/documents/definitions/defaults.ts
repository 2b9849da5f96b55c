import type { Kysely } from 'kysely';
import { ValidationError } from '../../core/errors.js';
import type { Database } from '../../store/db/schema.js';

/** Built-in document definition and workflow (Contract: `d_default`, `wf_archive`). */
export const DEFAULT_DEFINITION = 'd_default';
export const DEFAULT_WORKFLOW = 'wf_archive';

/**
 * Definitions and workflows are data: the built-in ones always exist, tenants add more. A name that
 * exists in neither is a validation error naming the field.
 */
export async function assertDefinitionExists(
  db: Kysely<Database>,
  tenantId: string,
  name: string,
  field: string,
) {
  if (name === DEFAULT_DEFINITION) return;
  const found = await db
    .selectFrom('definitions')
    .select('name')
    .where('tenant_id', '=', tenantId)
    .where('name', '=', name)
    .executeTakeFirst();
  if (!found) throw new ValidationError(`${field}`, 'must name a document definition');
}

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

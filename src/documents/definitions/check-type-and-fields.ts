import type { Actor } from '../../core/access/actor.js';
import type { Deps } from '../../core/deps.js';
import type { DocumentRow } from '../../core/access/document-access.js';
import { loadDefinition, loadUsableDefinition } from '../../core/documents/definition-access.js';
import {
  normalizeCustomFields,
  type CustomField,
  type CustomFieldInput,
} from '../../core/documents/custom-fields.js';
import { assertDefinitionFields } from '../../core/documents/definition-fields.js';
import { readJson } from '../../store/db/json.js';

/**
 * PUT /documents/:version and PUT /documents/edit/:version (issue 24, item 14): a change of a
 * document's `documentType` or `customFields` leaves it holding what its type's definition requires
 * (the new type's, when it changes); a user who removes a required field is refused as one who never
 * sent it. A new type must be one the caller may use (spec Documents rule 4). A change touching
 * neither passes: a definition made stricter later does not lock its older documents out of other
 * edits. Answers the custom fields to store, when they change.
 */
export async function checkTypeAndFields(
  deps: Deps,
  actor: Actor,
  doc: DocumentRow,
  changes: { documentType?: string | undefined; customFields?: CustomFieldInput[] | undefined },
  paths: { documentType: string; customFields: string },
): Promise<CustomField[] | undefined> {
  const customFields =
    changes.customFields && normalizeCustomFields(changes.customFields, paths.customFields);
  // A folder has no definition: its type is `folder`.
  if (doc.kind !== 'document') return customFields;
  const newType = changes.documentType !== undefined && changes.documentType !== doc.document_type;
  if (!newType && customFields === undefined) return undefined;
  const definition = newType
    ? await loadUsableDefinition(deps.db, actor, changes.documentType!, paths.documentType)
    : await loadDefinition(deps.db, actor, doc.document_type, paths.documentType);
  const kept = readJson<CustomField[]>(doc.custom_fields, []);
  assertDefinitionFields(definition, customFields ?? kept, paths.customFields);
  return customFields;
}

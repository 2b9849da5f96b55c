import type { Actor } from '../core/access/actor.js';
import type { DocumentRow } from '../core/access/document-access.js';
import { writeJson } from '../store/db/json.js';
import { DEFAULT_WORKFLOW } from './definitions/defaults.js';

/** What a new row of `documents` states itself; the rest starts as every new document's does. */
export type NewDocument = Pick<DocumentRow, 'id' | 'kind' | 'title' | 'document_type'> & Partial<DocumentRow>;

/**
 * A new row of `documents` (POST /documents, and POST /folders: a folder is a document of kind
 * `folder`), the caller's, in their organization unless given: version 1, in the default workflow
 * with no share state (Contract: wf_archive starts with no shareStateName; shares move it), not
 * shared, not signed, with no files, fields or data unless given.
 *
 * ```ts
 * await trx.insertInto('documents').values(newDocumentRow(actor, now, { id, kind: 'folder', title, document_type: 'folder' })).execute();
 * ```
 */
export function newDocumentRow(actor: Actor, now: Date, document: NewDocument): DocumentRow {
  return {
    tenant_id: actor.tenantId,
    organization_id: actor.organizationId,
    owner_id: actor.userId,
    created_by: actor.userId,
    definition_type: null,
    workflow: DEFAULT_WORKFLOW,
    share_state: null,
    main_file_id: null,
    barcode_file_id: null,
    custom_template: null,
    custom_fields: writeJson([]),
    folder_id: null,
    is_shared: 0,
    is_signed: 0,
    version: 1,
    data: writeJson({}),
    archive_expires_at: null,
    deleted_at: null,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    ...document,
  };
}

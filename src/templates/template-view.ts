import type { Selectable } from 'kysely';
import { readJson } from '../store/db/json.js';
import type { TemplateTable } from '../store/db/schema.js';

/** A stored template (spec Template: the data fields plus `__id`, `__addedBy`, `__addedOn`, `__owner`, `__users`, `__groups`). */
export function templateView(row: Selectable<TemplateTable>, addedBy: string): Record<string, unknown> {
  return {
    ...readJson<Record<string, unknown>>(row.data, {}),
    file: row.file_id,
    _version: row.version,
    __id: row.id,
    __addedBy: addedBy,
    __addedOn: row.created_at,
    __owner: row.owner_id,
    __users: readJson<string[]>(row.users, []),
    __groups: readJson<string[]>(row.groups, []),
  };
}

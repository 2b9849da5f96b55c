import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createTables, TIMESTAMPS } from './frozen/ddl.js';

/**
 * Contacts and enums (spec: Other resources; Files usage rule 1: their photos come from POST
 * /files/photo). A contact is one user's address-book entry; an enum is a named value list of an
 * organization, its records kept as one JSON array so a record change is one compare-and-set on the
 * enum's `version`.
 */
export function contactsEnums(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, d, {
        contacts: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            owner_id: 'text not null',
            name: 'text not null',
            email: 'text',
            phone: 'text',
            organisation: 'text',
            photo: 'text',
            ...TIMESTAMPS,
            version: 'integer not null',
          },
          indexes: { contacts_owner: ['tenant_id', 'owner_id'] },
        },
        enums: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            organization_id: 'text not null',
            name: 'text not null',
            label: 'text',
            records: 'json not null',
            created_by: 'text not null',
            ...TIMESTAMPS,
            version: 'integer not null',
          },
          // An enum is named by its name in paths: one per organization, also under races.
          uniqueIndexes: { enums_organization_name: ['tenant_id', 'organization_id', 'name'] },
        },
      });
    },
  };
}

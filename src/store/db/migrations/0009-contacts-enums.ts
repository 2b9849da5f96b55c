import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createIndex, createTable } from './frozen/ddl.js';

/**
 * Contacts and enums (spec: Other resources; Files usage rule 1: their photos come from POST
 * /files/photo). A contact is one user's address-book entry; an enum is a named value list of an
 * organization, its records kept as one JSON array so a record change is one compare-and-set on the
 * enum's `version`.
 */
export function contactsEnums(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTable(db, d, 'contacts', {
        id: 'text primary key',
        tenant_id: 'text not null',
        owner_id: 'text not null',
        name: 'text not null',
        email: 'text',
        phone: 'text',
        organisation: 'text',
        photo: 'text',
        created_at: 'timestamp not null',
        updated_at: 'timestamp not null',
        version: 'integer not null',
      }).execute();
      await createIndex(db, 'contacts_owner', 'contacts', ['tenant_id', 'owner_id']);

      await createTable(db, d, 'enums', {
        id: 'text primary key',
        tenant_id: 'text not null',
        organization_id: 'text not null',
        name: 'text not null',
        label: 'text',
        records: 'json not null',
        created_by: 'text not null',
        created_at: 'timestamp not null',
        updated_at: 'timestamp not null',
        version: 'integer not null',
      }).execute();
      // An enum is named by its name in paths: one per organization, also under races.
      await createIndex(db, 'enums_organization_name', 'enums', ['tenant_id', 'organization_id', 'name'], {
        unique: true,
      });
    },
  };
}

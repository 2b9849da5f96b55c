import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

/**
 * Contacts and enums (spec: Other resources; Files usage rule 1: their photos come from POST
 * /files/photo). A contact is one user's address-book entry; an enum is a named value list of an
 * organization, its records kept as one JSON array so a record change is one compare-and-set on the
 * enum's `version`.
 */
export function contactsEnums(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('contacts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('owner_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('email', 'text')
        .addColumn('phone', 'text')
        .addColumn('organisation', 'text')
        .addColumn('photo', 'text')
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('updated_at', d.timestampType, (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('contacts_owner')
        .on('contacts')
        .columns(['tenant_id', 'owner_id'])
        .execute();

      await db.schema
        .createTable('enums')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('label', 'text')
        .addColumn('records', d.jsonType, (c) => c.notNull())
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .addColumn('updated_at', d.timestampType, (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .execute();
      // An enum is named by its name in paths: one per organization, also under races.
      await db.schema
        .createIndex('enums_organization_name')
        .on('enums')
        .columns(['tenant_id', 'organization_id', 'name'])
        .unique()
        .execute();
    },
  };
}

import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

/**
 * Personal certificates (spec: Users, `certificates`; POST /users/{id}/certificate) and two-step
 * signing sessions (spec: Two-step signing session). DESIGN: two-step signing is stateless between
 * requests, so a session is a row plus its prepared PDF in the blob store, and any node finishes it.
 */
export function twoStep(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('user_certificates')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('certificate', 'text', (c) => c.notNull())
        .addColumn('chain', d.jsonType, (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('serial_number', 'text', (c) => c.notNull())
        .addColumn('key_algorithm', 'text', (c) => c.notNull())
        .addColumn('not_before', d.timestampType, (c) => c.notNull())
        .addColumn('not_after', d.timestampType, (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('user_certificates_user_hash')
        .on('user_certificates')
        .columns(['user_id', 'hash'])
        .unique()
        .execute();

      await db.schema
        .createTable('signing_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('tenant_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('document_id', 'text', (c) => c.notNull())
        .addColumn('document_version', 'integer', (c) => c.notNull())
        .addColumn('certificate_hash', 'text', (c) => c.notNull())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('prepared_file_id', 'text', (c) => c.notNull())
        .addColumn('state', d.jsonType, (c) => c.notNull())
        .addColumn('expires_at', d.timestampType, (c) => c.notNull())
        .addColumn('finished_at', d.timestampType)
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('signing_sessions_document')
        .on('signing_sessions')
        .column('document_id')
        .execute();
    },
  };
}

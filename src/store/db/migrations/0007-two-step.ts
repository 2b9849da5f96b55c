import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createTables } from './frozen/ddl.js';

/**
 * Personal certificates (spec: Users, `certificates`; POST /users/{id}/certificate) and two-step
 * signing sessions (spec: Two-step signing session). DESIGN: two-step signing is stateless between
 * requests, so a session is a row plus its prepared PDF in the blob store, and any node finishes it.
 */
export function twoStep(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, d, {
        user_certificates: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            user_id: 'text not null',
            hash: 'text not null',
            certificate: 'text not null',
            chain: 'json not null',
            subject: 'text not null',
            issuer: 'text not null',
            serial_number: 'text not null',
            key_algorithm: 'text not null',
            not_before: 'timestamp not null',
            not_after: 'timestamp not null',
            created_at: 'timestamp not null',
          },
          uniqueIndexes: { user_certificates_user_hash: ['user_id', 'hash'] },
        },
        signing_sessions: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            user_id: 'text not null',
            document_id: 'text not null',
            document_version: 'integer not null',
            certificate_hash: 'text not null',
            provider: 'text not null',
            mode: 'text not null',
            prepared_file_id: 'text not null',
            state: 'json not null',
            expires_at: 'timestamp not null',
            finished_at: 'timestamp',
            created_at: 'timestamp not null',
          },
          indexes: { signing_sessions_document: ['document_id'] },
        },
      });
    },
  };
}

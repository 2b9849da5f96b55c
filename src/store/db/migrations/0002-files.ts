import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createIndex, createTable } from './frozen/ddl.js';

/** Opaque file ids above the content-addressed blobs (DESIGN: Storage). */
export function files(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTable(db, d, 'files', {
        id: 'text primary key',
        tenant_id: 'text not null',
        sha256: 'text not null',
        size: 'bigint not null',
        name: 'text not null',
        mimetype: 'text not null',
        kind: 'text not null',
        owner_id: 'text',
        created_at: 'timestamp not null',
      }).execute();
      await createIndex(db, 'files_sha256', 'files', ['sha256']);
      await createIndex(db, 'files_tenant_owner', 'files', ['tenant_id', 'owner_id']);
    },
  };
}

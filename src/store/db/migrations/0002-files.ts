import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createTables } from './frozen/ddl.js';

/** Opaque file ids above the content-addressed blobs (DESIGN: Storage). */
export function files(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, d, {
        files: {
          columns: {
            id: 'text primary key',
            tenant_id: 'text not null',
            sha256: 'text not null',
            size: 'bigint not null',
            name: 'text not null',
            mimetype: 'text not null',
            kind: 'text not null',
            owner_id: 'text',
            created_at: 'timestamp not null',
          },
          indexes: { files_sha256: ['sha256'], files_tenant_owner: ['tenant_id', 'owner_id'] },
        },
      });
    },
  };
}

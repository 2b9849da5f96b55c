import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { createTables } from './frozen/ddl.js';

/**
 * The development PKI (a root CA and the organisation seal it issued), used when no seal key is
 * configured, kept in the database so that every node of an installation signs with the same seal
 * and trusts the same root (issue 21: each node made its own under DATA_DIR/pki). One row, written
 * once by whichever node gets there first. PEM text; development only. (On SQLite, one node per file,
 * the dev CA stays under DATA_DIR/pki: the table is made for one migration set on both.)
 */
export function devPki(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await createTables(db, d, {
        dev_pki: {
          columns: {
            name: 'text primary key',
            root_certificate: 'text not null',
            root_key: 'text not null',
            seal_certificate: 'text not null',
            seal_key: 'text not null',
            created_at: 'timestamp not null',
          },
        },
      });
    },
  };
}

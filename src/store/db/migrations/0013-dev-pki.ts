import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';

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
      await db.schema
        .createTable('dev_pki')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('root_certificate', 'text', (c) => c.notNull())
        .addColumn('root_key', 'text', (c) => c.notNull())
        .addColumn('seal_certificate', 'text', (c) => c.notNull())
        .addColumn('seal_key', 'text', (c) => c.notNull())
        .addColumn('created_at', d.timestampType, (c) => c.notNull())
        .execute();
    },
  };
}

import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { alterTables } from './frozen/ddl.js';

/**
 * A PDF whose cross-reference table was damaged is repaired when it is uploaded, and its file record
 * says so (issue 23): `repair` holds what was wrong and the size and SHA-512 of the bytes as they came
 * (JSON), null for every file stored as it was uploaded.
 */
export function fileRepairs(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await alterTables(db, d, { files: { columns: { repair: 'json' } } });
    },
  };
}

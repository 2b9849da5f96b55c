import type { Kysely, Migration } from 'kysely';
import type { SqlDialect } from '../dialect.js';
import { alterTables } from './frozen/ddl.js';

/**
 * TOTP step memory (issue 37 item 6, RFC 6238 §5.2): `users.totp_last_step` is the time step of the
 * last code accepted for the user (null: none since MFA was enabled); only a later step is accepted.
 */
export function totpStepMemory(d: SqlDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await alterTables(db, d, { users: { columns: { totp_last_step: 'integer' } } });
    },
  };
}

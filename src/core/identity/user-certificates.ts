import type { Selectable } from 'kysely';
import type { Actor } from '../access/actor.js';
import type { Deps } from '../deps.js';
import { ValidationError } from '../../base/errors.js';
import { readJson } from '../../store/db/json.js';
import type { UserCertificateTable } from '../../store/db/schema.js';

/** A personal certificate as the API shows it (listed on the user as `certificates`). */
export interface CertificateView {
  /** Lowercase hex SHA-256 of the DER (Contract): `certificateHash` in two-step signing, `{certificate}` in DELETE. */
  id: string;
  subject: string;
  issuer: string;
  serialNumber: string;
  keyAlgorithm: 'RSA' | 'ECDSA';
  notBefore: string;
  notAfter: string;
  chainLength: number;
  createdAt: string;
}

export type CertificateRow = Selectable<UserCertificateTable>;

export function certificateView(row: CertificateRow): CertificateView {
  return {
    id: row.hash,
    subject: row.subject,
    issuer: row.issuer,
    serialNumber: row.serial_number,
    keyAlgorithm: row.key_algorithm,
    notBefore: row.not_before,
    notAfter: row.not_after,
    chainLength: readJson<string[]>(row.chain, []).length,
    createdAt: row.created_at,
  };
}

export async function listCertificates(deps: Deps, userId: string): Promise<CertificateView[]> {
  const rows = await deps.db
    .selectFrom('user_certificates')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(certificateView);
}

/** The caller's own certificate named by `certificateHash`, or a validation error naming the field. */
export async function findOwnCertificate(deps: Deps, actor: Actor, hash: string): Promise<CertificateRow> {
  const row = await deps.db
    .selectFrom('user_certificates')
    .selectAll()
    .where('user_id', '=', actor.userId)
    .where('hash', '=', hash.toLowerCase())
    .executeTakeFirst();
  if (!row) {
    throw new ValidationError(
      'certificateHash',
      'must name one of your certificates (POST /users/{id}/certificate)',
    );
  }
  return row;
}

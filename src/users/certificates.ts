import { randomUUID, X509Certificate } from 'node:crypto';
import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { Conflict, Forbidden, NotFound, ValidationError } from '../base/errors.js';
import { certificateFields } from '../pki/certificate-fields.js';
import { readCertificates } from '../pki/read-certificates.js';
import { writeJson } from '../store/db/json.js';
import { loadManagedUser } from '../core/access/user-access.js';
import { writeTransaction } from '../store/db/dialect.js';
import {
  type CertificateView,
  type CertificateRow,
  certificateView,
} from '../core/identity/user-certificates.js';

/**
 * POST /users/{id}/certificate: a user adds a certificate of their own (an administrator may add one
 * for a user they manage). Only the certificate and its chain are stored, never a key: the key stays
 * in the user's hardware token, which signs in two steps.
 */
export async function addCertificate(
  deps: Deps,
  actor: Actor,
  userId: string,
  file: Uint8Array,
): Promise<CertificateView> {
  await assertMayManageCertificates(deps, actor, userId);
  const [leaf, ...chain] = certificatesOf(file);
  const fields = certificateFields(leaf);
  const keyType = new X509Certificate(leaf).publicKey.asymmetricKeyType;
  if (keyType !== 'rsa' && keyType !== 'ec') {
    throw new ValidationError('file', 'must hold an RSA or ECDSA public key');
  }
  const now = deps.clock.now();
  if (fields.notAfter < now) {
    throw new ValidationError('file', 'holds a certificate that has expired');
  }
  const row: CertificateRow = {
    id: randomUUID(),
    tenant_id: actor.tenantId,
    user_id: userId,
    hash: fields.sha256,
    certificate: Buffer.from(leaf).toString('base64'),
    chain: writeJson(chain.map((der) => Buffer.from(der).toString('base64'))),
    subject: fields.subjectText,
    issuer: fields.issuerText,
    serial_number: Buffer.from(fields.serialNumber).toString('hex'),
    key_algorithm: keyType === 'rsa' ? 'RSA' : 'ECDSA',
    not_before: fields.notBefore.toISOString(),
    not_after: fields.notAfter.toISOString(),
    created_at: now.toISOString(),
  };
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const existing = await trx
      .selectFrom('user_certificates')
      .select('id')
      .where('user_id', '=', userId)
      .where('hash', '=', row.hash)
      .executeTakeFirst();
    if (existing) throw new Conflict('This certificate is already on the user');
    await trx.insertInto('user_certificates').values(row).execute();
    await recordAction(trx, actor, {
      activityType: 'certificateAdded',
      objectType: 'user',
      objectId: userId,
      data: { hash: row.hash, subject: row.subject },
      at: now,
    });
  });
  return certificateView(row);
}

/** DELETE /users/{id}/certificate/{certificate}: `{certificate}` is the hash. Open sessions using it fail. */
export async function deleteCertificate(
  deps: Deps,
  actor: Actor,
  userId: string,
  hash: string,
): Promise<void> {
  await assertMayManageCertificates(deps, actor, userId);
  const now = deps.clock.now();
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const deleted = await trx
      .deleteFrom('user_certificates')
      .where('user_id', '=', userId)
      .where('hash', '=', hash.toLowerCase())
      .executeTakeFirst();
    if (Number(deleted.numDeletedRows) === 0) throw new NotFound('No such certificate');
    await recordAction(trx, actor, {
      activityType: 'certificateDeleted',
      objectType: 'user',
      objectId: userId,
      data: { hash: hash.toLowerCase() },
      at: now,
    });
  });
}

async function assertMayManageCertificates(deps: Deps, actor: Actor, userId: string): Promise<void> {
  if (userId === actor.userId) return;
  await loadManagedUser(deps, actor, userId).catch((error: unknown) => {
    // Someone who may not manage users must not learn whether this one exists.
    if (error instanceof NotFound || error instanceof Forbidden) throw new NotFound('No such user');
    throw error;
  });
}

/** The certificates of an upload, the user's own first (pki/read-certificates.ts). */
function certificatesOf(file: Uint8Array): [Uint8Array, ...Uint8Array[]] {
  const [leaf, ...chain] = readCertificates(file) ?? [];
  if (!leaf) throw new ValidationError('file', 'must be a PEM or DER X.509 certificate');
  return [leaf, ...chain];
}

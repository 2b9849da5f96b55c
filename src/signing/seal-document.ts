import type { Static } from 'typebox';
import type { SealBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { assertSignatureProvider } from '../core/signing/signature-provider.js';
import { loadManageable } from '../core/access/document-access.js';
import { VersionMismatch } from '../base/errors.js';
import { replaceMainFile } from '../core/changes/new-main-file.js';
import { mainFile } from '../core/changes/new-main-file.js';
import type { SignOutcome } from '../core/signing/sign-document.js';
import { signingOutcome } from '../core/signing/signer-change.js';
import { sealStoredFile, tenantDefaultLevel } from '../core/signing/seal.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * PUT /documents/seal/:version `{id, certificate: true, signatureProvider?, level?}`: the organisation
 * seal (PAdES, signed attributes per EN 319 142-1) as an incremental update. `signatureProvider` is the
 * further provider the spec mentions: `internal` (the organisation key, PKCS#12 or PKCS#11) or `csc` (a
 * remote signing service, CSC API v2), by default the installation's SEAL_PROVIDER. `level` B-B, B-T (needs TSA_URL), B-LT or B-LTA, by default the tenant's `defaultPadesLevel`; a
 * failing TSA falls back and says so.
 */
export async function sealDocument(
  deps: Deps,
  actor: Actor,
  options: Static<typeof SealBody> & { version: number },
): Promise<SignOutcome> {
  const doc = await loadManageable(deps.db, actor, options.id);
  if (doc.version !== options.version) throw new VersionMismatch();
  const provider = await assertSignatureProvider(deps, options.signatureProvider);
  const previous = await mainFile(deps, doc);
  const { sealed, next } = await sealStoredFile(deps, {
    operation: 'seal',
    file: previous,
    signerName: 'Organisation seal',
    level: options.level ?? (await tenantDefaultLevel(deps, doc.tenant_id)),
    reason: 'Sealed',
    provider,
  });
  const now = deps.clock.now();
  const updated = await writeTransaction(deps.db, deps.dialect, (trx) =>
    replaceMainFile(trx, deps, {
      doc,
      previous,
      bytes: next,
      by: actor,
      expectedVersion: options.version,
      signed: true,
      activityType: 'documentSealed',
      event: 'documentSigned',
      reason: 'sealed',
      data: {
        provider,
        levelAchieved: sealed.levelAchieved,
        fellBack: sealed.fellBack,
        warnings: sealed.warnings,
      },
      archive: sealed.archive,
      now,
    }),
  );
  return {
    status: 'SUCCESS',
    ...signingOutcome(sealed),
    shareStateName: updated.share_state,
  };
}

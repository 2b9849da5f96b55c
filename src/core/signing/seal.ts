import type { Kysely } from 'kysely';
import type { Actor } from '../access/actor.js';
import type { Deps } from '../deps.js';
import { performance } from 'node:perf_hooks';
import type { TsaOptions } from '../../pdf/finish-signature.js';
import { signPdf, type PadesLevel, type SignPdfResult } from '../../pdf/sign-pdf.js';
import type { SignatureOperation } from '../metrics.js';
import type { ResolvedVisuals } from './visual-input.js';
import { getProperties } from '../settings/tenant-settings.js';
import type { Database } from '../../store/db/schema.js';

/** The level a call gets unless it asks: B-T with a TSA configured, else B-B (DESIGN). */
export function defaultLevel(deps: Deps): PadesLevel {
  return deps.config.tsaUrl ? 'B-T' : 'B-B';
}

/**
 * The level of a sign or seal call that names none: the tenant property `defaultPadesLevel` when set,
 * else `defaultLevel`. A level needing a TSA is refused when the property is set without one (PUT
 * /settings/properties); should TSA_URL be removed afterwards, the call signs at B-B and says so.
 */
export async function tenantDefaultLevel(deps: Deps, tenantId: string): Promise<PadesLevel> {
  return (await getProperties(deps, { tenantId })).defaultPadesLevel ?? defaultLevel(deps);
}

/**
 * Signs bytes with the organisation key (or the provider's) on behalf of `signerName`. A failing TSA, or revocation data
 * that cannot be had for B-LT, falls back and says so; a revoked certificate fails the call.
 * `operation` names the signature in the metrics: an organisation `seal`, or a `sign` call's.
 */
export async function sealBytes(
  deps: Deps,
  options: {
    operation: SignatureOperation;
    pdf: Uint8Array;
    signerName: string;
    level: PadesLevel;
    visuals?: ResolvedVisuals;
    reason?: string;
    /** The `signatureProvider` whose key signs; by default the installation's (SEAL_PROVIDER). */
    provider?: string | undefined;
  },
): Promise<SignPdfResult> {
  const started = performance.now();
  const signer = await (await deps.seal()).signerFor(options.provider);
  const signed = await signPdf({
    pdf: options.pdf,
    signer,
    signerName: options.signerName,
    signingTime: deps.clock.now(),
    level: options.level,
    ...(deps.config.tsaUrl ? { tsa: timestampAuthority(deps, deps.config.tsaUrl) } : {}),
    onTimestampFailure: 'fallback',
    revocation: (chains, now) => deps.revocation.collect(chains, now),
    ...(options.reason ? { reason: options.reason } : {}),
    ...(options.visuals ?? {}),
  });
  deps.metrics.signatureMade(options.operation, options.level, (performance.now() - started) / 1000);
  return signed;
}

/** The TSA (TSA_URL) as signatures use it: its requests counted in the metrics. */
export function timestampAuthority(deps: Pick<Deps, 'metrics'>, url: string): TsaOptions {
  return { url, observe: deps.metrics.observeTsa };
}

/** The name a user's signatures carry in the signature dictionary: their display name, else login name. */
export async function userSignerName(db: Kysely<Database>, actor: Pick<Actor, 'userId'>): Promise<string> {
  const user = await db
    .selectFrom('users')
    .select(['display_name', 'name'])
    .where('id', '=', actor.userId)
    .executeTakeFirstOrThrow();
  return user.display_name ?? user.name;
}

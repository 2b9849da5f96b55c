import type { Deps } from '../deps.js';
import { ValidationError } from '../../base/errors.js';

/**
 * The `signatureProvider` of a sign or seal call must name a provider this installation has (`internal`,
 * the organisation key, and `csc` with a CSC service configured; pki/seal-keys.ts); none named is the
 * installation's default (SEAL_PROVIDER). An unknown
 * name is a 400, never silently ignored: an integrator who asks for a provider and gets another
 * would hold a signature they did not ask for.
 */
export async function assertSignatureProvider(deps: Deps, provider: string | undefined): Promise<string> {
  const chosen = provider ?? deps.config.seal.provider;
  const { providers } = await deps.seal();
  if (!providers.includes(chosen)) {
    throw new ValidationError('signatureProvider', `must be one of [${providers.join(', ')}]`);
  }
  return chosen;
}

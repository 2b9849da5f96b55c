import type { Deps } from '../core/deps.js';
import { ValidationError } from '../core/errors.js';

/**
 * The `signatureProvider` of a sign or seal call must name a provider this installation has (today
 * `internal`, the organisation key; more come as they are configured, pki/seal-keys.ts). An unknown
 * name is a 400, never silently ignored: an integrator who asks for a provider and gets another
 * would hold a signature they did not ask for.
 */
export async function assertSignatureProvider(deps: Deps, provider: string | undefined): Promise<string> {
  const chosen = provider ?? 'internal';
  const { providers } = await deps.seal();
  if (!providers.includes(chosen)) {
    throw new ValidationError('signatureProvider', `must be one of [${providers.join(', ')}]`);
  }
  return chosen;
}

import * as client from 'openid-client';
import type { OidcProviderConfig } from '../../base/config.js';
import { NotFound } from '../../base/errors.js';
import { IdentityProviderFailed } from './identity-provider-failed.js';

// Provider metadata rarely changes; re-reading it hourly picks up a change without a restart.
const DISCOVERY_TTL_MS = 3_600_000;
// A provider that hangs must not hold a login request (and its connection) for openid-client's 30 s.
const REQUEST_TIMEOUT_SECONDS = 10;

/** A configured provider with its discovered metadata, ready for openid-client calls. */
export interface OpenProvider {
  provider: OidcProviderConfig;
  client: client.Configuration;
}

/**
 * The operator's OpenID Connect providers (OIDC_PROVIDERS) and their discovered metadata, fetched on
 * first use and kept for an hour. One instance per app (built with the routes), never module state.
 *
 * ```ts
 * const providers = new OidcProviders(config.oidcProviders);
 * providers.list(); // [{ name: 'corp', label: 'Corporate login' }]
 * const { provider, client } = await providers.open('corp'); // NotFound for an unknown name
 * ```
 */
export class OidcProviders {
  readonly #byName: ReadonlyMap<string, OidcProviderConfig>;
  readonly #discovered = new Map<string, { at: number; client: Promise<client.Configuration> }>();

  constructor(providers: readonly OidcProviderConfig[]) {
    this.#byName = new Map(providers.map((p) => [p.name, Object.freeze({ ...p })]));
  }

  list(): { name: string; label: string }[] {
    return [...this.#byName.values()].map((p) => ({ name: p.name, label: p.label }));
  }

  /** The provider's settings; an unknown name is "not found". */
  get(name: string): OidcProviderConfig {
    const provider = this.#byName.get(name);
    if (!provider) throw new NotFound('No such identity provider');
    return provider;
  }

  /** The provider with its metadata, discovered now if not known or stale; 502 when it cannot be read. */
  async open(name: string): Promise<OpenProvider> {
    const provider = this.get(name);
    const cached = this.#discovered.get(name);
    const now = Date.now();
    let pending = cached && now - cached.at < DISCOVERY_TTL_MS ? cached.client : undefined;
    if (!pending) {
      pending = discover(provider);
      const entry = { at: now, client: pending };
      this.#discovered.set(name, entry);
      // A failed discovery is not remembered: the next sign-in tries again.
      pending.catch(() => {
        if (this.#discovered.get(name) === entry) this.#discovered.delete(name);
      });
    }
    return { provider, client: await pending };
  }
}

/** The path under which the sign-in endpoints live (also the scope of their browser-binding cookie). */
export const OIDC_LOGIN_PATH = '/api/v1/login/oidc';

/** Where the provider sends the browser back: fixed per provider and registered with it by the operator. */
export function callbackUrl(publicUrl: string, providerName: string): string {
  return `${publicUrl}${OIDC_LOGIN_PATH}/${encodeURIComponent(providerName)}/callback`;
}

async function discover(provider: OidcProviderConfig): Promise<client.Configuration> {
  const auth =
    provider.tokenEndpointAuthMethod === 'client_secret_post'
      ? client.ClientSecretPost(provider.clientSecret)
      : provider.tokenEndpointAuthMethod === 'client_secret_basic'
        ? client.ClientSecretBasic(provider.clientSecret)
        : client.None();
  try {
    // The timeout given here also applies to every later request made with the configuration.
    return await client.discovery(new URL(provider.issuer), provider.clientId, undefined, auth, {
      // Plain HTTP is accepted by the configuration only on loopback addresses (config.ts).
      execute: new URL(provider.issuer).protocol === 'http:' ? [client.allowInsecureRequests] : [],
      timeout: REQUEST_TIMEOUT_SECONDS,
    });
  } catch (error) {
    throw new IdentityProviderFailed(`The identity provider ${provider.name} could not be reached`, {
      cause: error,
    });
  }
}

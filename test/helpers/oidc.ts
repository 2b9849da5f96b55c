import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** An account at the test identity provider; its id is what the user types at the provider's login. */
export interface ProviderAccount {
  id: string;
  email: string;
  emailVerified: boolean;
  /** Released with the `phone` scope as `phone_number` (and `phone_number_verified` when given). */
  phoneNumber?: string;
  phoneNumberVerified?: boolean;
  /** An identity number, released with the `idn` scope as the claim `idn` (a national provider's). */
  idn?: string;
}

export interface TestIdentityProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** One OIDC_PROVIDERS entry for this provider. */
  entry: (name: string, extra?: Record<string, unknown>) => Record<string, unknown>;
  close: () => Promise<void>;
}

/**
 * A real OpenID provider (`oidc-provider`, with its development login and consent pages) on a
 * loopback port, with one confidential client whose redirect URIs are `redirectUris`.
 */
export async function startIdentityProvider(options: {
  redirectUris: string[];
  accounts: ProviderAccount[];
}): Promise<TestIdentityProvider> {
  const accounts = new Map(options.accounts.map((a) => [a.id, a]));
  let handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> | void = (_req, res) => {
    res.end();
  };
  // The issuer URL holds the port, so the provider is made once the server listens.
  const http = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const clientId = 'signery';
  const clientSecret = 'signery-test-client-secret';
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      phone: ['phone_number', 'phone_number_verified'],
      idn: ['idn'],
    },
    cookies: { keys: ['test-cookie-signing-key'] },
    async findAccount(_ctx, id) {
      const account = accounts.get(id);
      if (!account) return undefined;
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          email: account.email,
          email_verified: account.emailVerified,
          ...(account.phoneNumber !== undefined ? { phone_number: account.phoneNumber } : {}),
          ...(account.phoneNumberVerified !== undefined
            ? { phone_number_verified: account.phoneNumberVerified }
            : {}),
          ...(account.idn !== undefined ? { idn: account.idn } : {}),
        }),
      };
    },
  });
  handle = provider.callback();
  return {
    issuer,
    clientId,
    clientSecret,
    entry: (name, extra = {}) => ({ name, label: `Test ${name}`, issuer, clientId, clientSecret, ...extra }),
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.closeAllConnections();
        http.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * OIDC_PROVIDERS naming providers that are configured and never called (`https://<name>.example.test`):
 * for shares whose `allowedOAuths` must name configured providers (issue 24).
 */
export function configuredProviders(...names: string[]): string {
  return JSON.stringify(
    names.map((name) => ({ name, label: name, issuer: `https://${name}.example.test`, clientId: 'signery' })),
  );
}

/** Cookies of one host, as a browser would keep them (paths ignored: the provider's do not collide). */
class CookieJar {
  readonly #cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

export interface BrowserSignIn {
  /** The URL the provider sent the browser back to, moved from PUBLIC_URL onto the test server. */
  callback: URL;
  /** The browser's cookie for the Signery server (the sign-in binding), as a Cookie header. */
  cookie: string;
}

/**
 * Plays the browser with fetch: opens the start URL, follows the provider's redirects, types
 * `accountId` at its login page and accepts its consent page, and stops where the provider sends the
 * browser back to `publicUrl` (PUBLIC_URL, which stands for a proxy in front of `serverUrl`).
 */
export async function signInWithBrowser(options: {
  start: string;
  accountId: string;
  publicUrl: string;
  serverUrl: string;
}): Promise<BrowserSignIn> {
  const signery = new CookieJar();
  const provider = new CookieJar();
  const started = await fetch(options.start, { redirect: 'manual' });
  if (started.status !== 302) throw new Error(`start answered ${started.status}: ${await started.text()}`);
  signery.take(started);
  let next = new URL(started.headers.get('location') ?? '');
  for (let step = 0; step < 20; step++) {
    if (next.href.startsWith(options.publicUrl)) {
      const callback = new URL(next.href.slice(options.publicUrl.length), options.serverUrl);
      return { callback, cookie: signery.header() };
    }
    let response = await fetch(next, { redirect: 'manual', headers: { cookie: provider.header() } });
    provider.take(response);
    if (response.status === 200) {
      const page = await response.text();
      const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
      if (prompt !== 'login' && prompt !== 'consent') throw new Error(`unexpected provider page: ${page}`);
      const form = new URLSearchParams({ prompt });
      if (prompt === 'login') {
        form.set('login', options.accountId);
        form.set('password', 'any');
      }
      response = await fetch(next, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie: provider.header(), 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      });
      provider.take(response);
    }
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || !location) {
      throw new Error(`provider answered ${response.status}: ${await response.text()}`);
    }
    next = new URL(location, next);
  }
  throw new Error('too many redirects at the provider');
}

/**
 * The query parameters that carry a credential, and how a parameter's name is recognised as one.
 *
 * DESIGN (issue 37): "No credential ever travels in a URL that leaves the API: redirects carry none,
 * and a token parameter is recognised after URL decoding, whatever its spelling." A name is compared
 * once percent-decoded (as often as it decodes: a URL may be decoded again on its way, `%2574oken`),
 * compatibility-normalised and case-folded, so that `%74oken`, `tok%65n` and `TOKEN` are `token` both
 * where the server reads a token (http/authentication.ts) and where it removes one (a redirect's
 * target, a `Location` header, a log line): a spelling one reads and the other misses is how a
 * session once travelled to a page of a recipient's choosing.
 *
 * @example
 * credentialParam('tok%65n'); // 'token'
 * credentialParam('redirect'); // undefined
 */

/**
 * `token` is the one the API reads (session, API key, share link, recipient session); `access_token` is
 * OAuth's, never read here, but a credential wherever it travels.
 */
export const CREDENTIAL_PARAMS = ['token', 'access_token'] as const;
export type CredentialParam = (typeof CREDENTIAL_PARAMS)[number];

/** The parameter the API reads a token from. */
export const TOKEN_PARAM: CredentialParam = 'token';

/** Enough for any honest URL; a name still encoded after this many rounds is compared as it is then. */
const DECODING_ROUNDS = 5;
const PLAIN_NAME = /^[A-Za-z0-9_.~-]*$/;

/** `name` as the server understands it: decoded until it no longer changes, NFKC, lower case. */
export function canonicalParamName(name: string): string {
  // Nearly every name: nothing to decode or normalise (this runs for every request's parameters).
  if (PLAIN_NAME.test(name)) return name.toLowerCase();
  let decoded = name;
  for (let round = 0; round < DECODING_ROUNDS; round++) {
    let next: string;
    try {
      next = decodeURIComponent(decoded.replace(/\+/g, ' '));
    } catch {
      break; // A malformed escape: the name is what it is.
    }
    if (next === decoded) break;
    decoded = next;
  }
  return decoded.normalize('NFKC').toLowerCase();
}

/** The credential parameter `name` stands for, whatever its spelling, if any. */
export function credentialParam(name: string): CredentialParam | undefined {
  const canonical = canonicalParamName(name);
  return CREDENTIAL_PARAMS.find((param) => param === canonical);
}

/** Removes every credential parameter from `params`, whatever its spelling; true when there was one. */
export function dropCredentials(params: URLSearchParams): boolean {
  const found = [...new Set(params.keys())].filter((name) => credentialParam(name) !== undefined);
  for (const name of found) params.delete(name);
  return found.length > 0;
}

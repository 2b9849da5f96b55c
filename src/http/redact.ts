import {
  canonicalParamName,
  CREDENTIAL_PARAMS,
  dropCredentials,
} from '../core/identity/credential-params.js';

/**
 * What may be written to logs. The session token travels in the query string and API keys and share
 * tokens in some paths, so URLs are cleaned before they reach pino (non-negotiable: never logged).
 */

/** Query parameters whose values are never logged, recognised whatever their spelling (`%74oken`). */
const SECRET_PARAMS = new Set<string>([...CREDENTIAL_PARAMS, 'code', 'password', 'otp']);
const PLAIN_SECRET_QUERY = new RegExp(`([?&](?:${[...SECRET_PARAMS].join('|')})=)[^&#]*`, 'gi');
const ESCAPED = /[%\u0080-\uffff]/;
/** A query's `name=value` pair, in a URL or in a message quoting one. */
const QUERY_PAIR = /([?&])([^?&#=\s]+)=([^&#]*)/g;
/** How deep a URL inside a parameter (an encoded `redirect`) is cleaned too. */
const NESTING = 3;
const SECRET_PATHS: RegExp[] = [/(\/api\/key\/)[^/?#]+/i, /(\/s\/)[^/?#]+/i, /(\/login\/activate\/)[^/?#]+/i];
/** Share-link and recipient session tokens wherever they appear (e.g. inside an encoded `redirect`). */
const SHARE_TOKEN = /(shr|shs)_[A-Za-z0-9_-]{20,}/g;

export function redactUrl(url: string): string {
  // A name in plain letters is read at once (this runs for every request's log line); only a URL with
  // escapes or other characters is read pair by pair, its names decoded.
  let clean = url.replace(PLAIN_SECRET_QUERY, '$1[REDACTED]');
  if (ESCAPED.test(clean)) clean = redactQuery(clean, NESTING);
  for (const pattern of SECRET_PATHS) clean = clean.replace(pattern, '$1[REDACTED]');
  return clean.replace(SHARE_TOKEN, '$1_[REDACTED]');
}

/**
 * The secret parameters' values replaced, and cleaned the same way: the rest of a value after a `?`
 * (`redirect=https://host/page?%74oken=…`) and a value that decodes to a URL with a query of its own.
 */
function redactQuery(text: string, depth: number): string {
  return text.replace(QUERY_PAIR, (_pair, separator: string, name: string, value: string) => {
    if (SECRET_PARAMS.has(canonicalParamName(name))) return `${separator}${name}=[REDACTED]`;
    const query = value.indexOf('?');
    const clean =
      query < 0
        ? redactEncoded(value, depth)
        : redactEncoded(value.slice(0, query), depth) + redactQuery(value.slice(query), depth);
    return `${separator}${name}=${clean}`;
  });
}

function redactEncoded(value: string, depth: number): string {
  if (depth === 0 || !value.includes('%')) return value;
  let decoded: string;
  try {
    decoded = decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    return value;
  }
  const clean = redactQuery(decoded, depth - 1);
  return clean === decoded ? value : encodeURIComponent(clean).replace(/%5BREDACTED%5D/g, '[REDACTED]');
}

/** pino redaction paths for headers and bodies that may carry secrets. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.recoveryCode',
  '*.code',
  '*.otp',
  '*.hmacSecret',
];

/**
 * pino's `err` serializer: an error's message and stack may quote a URL (Fastify's FST_ERR_BAD_URL,
 * FST_ERR_REP_ALREADY_SENT) and Node's parser errors carry the raw request bytes (`rawPacket`), so
 * only the error's kind, code and cleaned text are logged.
 */
export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { type: typeof error, message: redactUrl(String(error)), stack: '' };
  const { code, statusCode } = error as Error & { code?: unknown; statusCode?: unknown };
  return {
    type: error.constructor.name,
    message: redactUrl(error.message),
    stack: redactUrl(error.stack ?? ''),
    ...(code === undefined ? {} : { code }),
    ...(statusCode === undefined ? {} : { statusCode }),
    ...(error.cause === undefined ? {} : { cause: serializeError(error.cause) }),
  };
}

interface SerializedError {
  type: string;
  message: string;
  stack: string;
  [key: string]: unknown;
}

/**
 * pino's `logMethod` hook: a log line's text (Fastify writes some with the raw URL in them, e.g.
 * "Reply was already sent … in the "<url>" route") is cleaned like a URL before it is written.
 */
export function redactLogArguments(
  this: unknown,
  args: unknown[],
  method: (...args: unknown[]) => void,
): void {
  method.apply(
    this,
    args.map((arg) => (typeof arg === 'string' ? redactUrl(arg) : arg)),
  );
}

/**
 * A redirect's target without the credentials of the request that caused it, whatever their spelling:
 * a `Location` header never repeats a token (a plugin that redirects to `req.url`, @fastify/swagger-ui's
 * static index, would otherwise echo it, and loop on itself). A target that cannot be read keeps no
 * query at all.
 */
export function withoutCredentials(location: string): string {
  let url: URL;
  try {
    url = new URL(location, 'http://placeholder');
  } catch {
    return location.split(/[?#]/)[0] ?? '';
  }
  if (!dropCredentials(url.searchParams)) return location;
  if (/^[a-z][a-z0-9+.-]*:/i.test(location)) return url.href;
  if (location.startsWith('//')) return url.href.slice(url.protocol.length);
  return url.pathname + url.search + url.hash;
}

/**
 * What may be written to logs. The session token travels in the query string and API keys and share
 * tokens in some paths, so URLs are cleaned before they reach pino (non-negotiable: never logged).
 */
const SECRET_QUERY = /([?&](?:token|access_token|code|password|otp)=)[^&#]*/gi;
const SECRET_PATHS: RegExp[] = [/(\/api\/key\/)[^/?#]+/i, /(\/s\/)[^/?#]+/i, /(\/login\/activate\/)[^/?#]+/i];
/** Share-link and recipient session tokens wherever they appear (e.g. inside an encoded `redirect`). */
const SHARE_TOKEN = /(shr|shs)_[A-Za-z0-9_-]{20,}/g;

export function redactUrl(url: string): string {
  let clean = url.replace(SECRET_QUERY, '$1[REDACTED]');
  for (const pattern of SECRET_PATHS) clean = clean.replace(pattern, '$1[REDACTED]');
  return clean.replace(SHARE_TOKEN, '$1_[REDACTED]');
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

const CREDENTIAL_PARAMS = ['token', 'access_token'];

/**
 * A redirect's target without the credentials of the request that caused it: a `Location` header
 * never repeats a token (a plugin that redirects to `req.url`, @fastify/swagger-ui's static index,
 * would otherwise echo it, and loop on itself).
 */
export function withoutCredentials(location: string): string {
  if (!/[?&](?:token|access_token)=/i.test(location)) return location;
  const url = new URL(location, 'http://placeholder');
  for (const name of [...url.searchParams.keys()])
    if (CREDENTIAL_PARAMS.includes(name.toLowerCase())) url.searchParams.delete(name);
  if (/^[a-z][a-z0-9+.-]*:/i.test(location)) return url.href;
  if (location.startsWith('//')) return url.href.slice(url.protocol.length);
  return url.pathname + url.search + url.hash;
}

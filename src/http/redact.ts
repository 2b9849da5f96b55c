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

import { createHmac } from 'node:crypto';

/**
 * `x-signery-signature` (Contract): the hex HMAC-SHA256 of the raw request body, keyed with the
 * webhook's `hmacSecret`. Receivers compute the same over the bytes they received.
 */
export function signBody(secret: string, body: string | Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

import { createHmac, randomBytes } from 'node:crypto';

/** The prefix of Standard Webhooks secrets: the rest is the base64 of the key's bytes. */
const STANDARD_SECRET_PREFIX = 'whsec_';

/**
 * `x-signery-signature` (Contract): the hex HMAC-SHA256 of the raw request body, keyed with the
 * webhook's `hmacSecret`. Receivers compute the same over the bytes they received.
 */
export function signBody(secret: string, body: string | Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * The headers of the Standard Webhooks specification (standardwebhooks.com), so that receivers can
 * verify a delivery and reject replays with an off-the-shelf library: `webhook-id` (the delivery id,
 * the same on every attempt), `webhook-timestamp` (this attempt's time in Unix seconds) and
 * `webhook-signature`, a space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per
 * secret (several while a secret is being rotated).
 */
export function standardWebhookHeaders(
  secrets: readonly string[],
  deliveryId: string,
  attemptAt: Date,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = String(Math.floor(attemptAt.getTime() / 1000));
  const signed = `${deliveryId}.${timestamp}.${body}`;
  return {
    'webhook-id': deliveryId,
    'webhook-timestamp': timestamp,
    'webhook-signature': secrets
      .map((secret) => `v1,${createHmac('sha256', standardKey(secret)).update(signed).digest('base64')}`)
      .join(' '),
  };
}

/**
 * The key a Standard Webhooks verifier derives from a secret: a `whsec_` secret (what Signery
 * generates) is the base64 of its key, as the specification says; any other secret, chosen by the
 * integrator before these headers existed, keys the HMAC with its own UTF-8 bytes (verifiers take it
 * in their "raw" format), as `x-signery-signature` does.
 */
function standardKey(secret: string): Buffer {
  return secret.startsWith(STANDARD_SECRET_PREFIX)
    ? Buffer.from(secret.slice(STANDARD_SECRET_PREFIX.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

/** A new webhook secret in the Standard Webhooks form: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${STANDARD_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

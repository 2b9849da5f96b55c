import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimitConfig } from '../base/config.js';
import { RateLimited } from '../base/errors.js';
import type { RateLimiter, RateLimitPolicy } from '../rate-limits/rate-limiter.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: never limited (health probes and metrics, which load balancers and scrapers call). */
    rateLimit?: boolean;
    /**
     * A route counted under a policy of its own, per client address, whoever calls: `public-verify`
     * (POST /verify, the public verification page's checks).
     */
    rateLimitPolicy?: 'public-verify';
  }
}

/** Every limit counts requests in one-minute windows (docs/security.md: Rate limits). */
export const RATE_LIMIT_WINDOW_SECONDS = 60;

/** The policies, named as the RateLimit-Policy and RateLimit header fields name them. */
interface Policies {
  apiKey: RateLimitPolicy;
  session: RateLimitPolicy;
  recipient: RateLimitPolicy;
  anonymous: RateLimitPolicy;
  publicVerify: RateLimitPolicy;
}

/** Who is counted, in the words of a 429's message (never the token, key or address itself). */
const COUNTED: Record<string, string> = {
  'api-key': 'per API key',
  session: 'per session',
  recipient: 'per recipient link or session',
  anonymous: 'per client address without a credential',
  'public-verify': 'per client address on the public verification page',
};

/**
 * Which bucket a request is counted in, once authentication has said who calls: the API key or
 * session token (by its id), the recipient session or share link (by the share), or, for a request
 * without a credential or whose credential was refused, the client's address. Refused credentials
 * count against the address, so made-up tokens do not each get a fresh allowance. A route with a
 * policy of its own (`rateLimitPolicy`) counts the client's address under it.
 */
function bucketOf(request: FastifyRequest, policies: Policies): { policy: RateLimitPolicy; key: string } {
  if (request.routeOptions.config.rateLimitPolicy === 'public-verify')
    return { policy: policies.publicVerify, key: request.ip };
  const { actor, recipient } = request;
  if (actor)
    return { policy: actor.tokenKind === 'api_key' ? policies.apiKey : policies.session, key: actor.tokenId };
  if (recipient) {
    return {
      policy: policies.recipient,
      key: recipient.sessionId ? `session:${recipient.sessionId}` : `share:${recipient.shareId}`,
    };
  }
  return { policy: policies.anonymous, key: request.ip };
}

/**
 * Admits a request under its caller's rate limit: counts it, answers the IETF RateLimit-Policy and
 * RateLimit header fields (draft-ietf-httpapi-ratelimit-headers: `"api-key";q=1000;w=60` and
 * `"api-key";r=998;t=42`) on every answer of a limited route, refused ones included, and refuses
 * with 429 RATE_LIMITED and Retry-After (the end of the window) once the limit is reached.
 * Authentication calls it once it knows the caller (http/authentication.ts); routes with
 * `config: {rateLimit: false}` are not counted.
 */
export function rateLimitAdmission(
  limiter: RateLimiter,
  config: RateLimitConfig,
): (request: FastifyRequest, reply: FastifyReply) => Promise<void> {
  const policies: Policies = {
    apiKey: { name: 'api-key', limit: config.perMinute },
    session: { name: 'session', limit: config.perMinute },
    recipient: { name: 'recipient', limit: config.perMinute },
    anonymous: { name: 'anonymous', limit: config.anonymousPerMinute },
    publicVerify: { name: 'public-verify', limit: config.publicVerifyPerMinute },
  };
  return async (request, reply) => {
    // A route that does not exist is not a limited route; it costs nothing to answer.
    if (request.is404 || request.routeOptions.config.rateLimit === false) return;
    const { policy, key } = bucketOf(request, policies);
    const verdict = await limiter.take(policy, key);
    void reply.header(
      'ratelimit-policy',
      `"${policy.name}";q=${policy.limit};w=${RATE_LIMIT_WINDOW_SECONDS}`,
    );
    void reply.header('ratelimit', `"${policy.name}";r=${verdict.remaining};t=${verdict.resetSeconds}`);
    if (!verdict.allowed) {
      throw new RateLimited(
        `Too many requests: at most ${policy.limit} a minute ${COUNTED[policy.name]}; try again in ${verdict.resetSeconds} s`,
        verdict.resetSeconds,
      );
    }
  };
}

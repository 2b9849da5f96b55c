import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../core/access/actor.js';
import { authenticate, type AuthenticatedRow } from '../auth/authenticate.js';
import { credentialParam, TOKEN_PARAM } from '../core/identity/credential-params.js';
import { isApiKey } from '../core/identity/secrets.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, MfaRequired, Unauthenticated } from '../base/errors.js';
import { assertOwnSiteRequest } from './cookie-sessions.js';
import { isShareToken, resolveShareToken } from '../core/sharing/recipient.js';
import { type Recipient, type RecipientCaller } from '../core/access/recipient-caller.js';

/**
 * How a route authenticates:
 * - `required` (default): a valid, unlocked token;
 * - `locked`: a valid token, locked or not (the calls that unlock a session, GET /logout);
 * - `optional`: an actor when a valid token is given, none otherwise (GET /login);
 * - `none`: no token is read (login, health);
 * - `recipient`: a share-link or recipient session token (an external recipient) or an unlocked
 *   session (an internal user); the link of a protected share, or a session that has not passed all
 *   its protections, gets 403 MFA_REQUIRED; a link or session of a share that ended is 401, and once
 *   its recipient acted only routes marked `signedCopies` answer it (403 otherwise);
 * - `recipient-locked`: the same, locked shares included (the calls that unlock a share).
 */
export type AuthMode = 'required' | 'locked' | 'optional' | 'none' | 'recipient' | 'recipient-locked';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** A path parameter that may itself carry the credential (DELETE /api/key/:token, Contract). */
    credentialParam?: string;
    /**
     * A recipient route that downloads what the recipient signed, or unlocks a protected share to
     * download it (its code, its unlock, what it asks for): the one kind a share's link or session
     * still reaches after its recipient acted (RECIPIENT_DOWNLOAD_DAYS, share-standing.ts).
     */
    signedCopies?: boolean;
    /**
     * The MCP endpoint (/mcp), where an agent's or read-only key may send requests that are not GETs:
     * the tools themselves hold what such a key may do (issue 42).
     */
    agentEndpoint?: boolean;
  }
  interface FastifyRequest {
    actor: Actor | undefined;
    /** An external recipient, on recipient routes called with a share-link token. */
    recipient: Recipient | undefined;
    /** The caller's user and tenant row, as read by authentication (GET /login answers from it). */
    actorRow: AuthenticatedRow | undefined;
    /** Why a given token did not authenticate, for routes that answer without one (GET /login). */
    authFailure: 'unknown' | 'expired' | 'suspended' | undefined;
  }
}

export const TOKEN_COOKIE = 'signery_token';

/**
 * The query token each request was authenticated with, for GET /login's echo: kept beside the request,
 * never on it, where a handler or a log line could pick it up.
 */
const queryTokens = new WeakMap<FastifyRequest, string>();

/**
 * The token of the request's query string, whatever the spelling of its parameter (`token`, `%74oken`,
 * `TOKEN`: core/identity/credential-params.ts). The parameter is taken out of the parsed query so that
 * route schemas need not declare it and it never reaches a handler or a log line. Several different
 * tokens name no one caller: 401.
 */
function takeQueryToken(request: FastifyRequest): string | undefined {
  const query = request.query as Record<string, unknown> | undefined;
  if (!query) return undefined;
  const tokens = new Set<string>();
  for (const name of Object.keys(query)) {
    if (credentialParam(name) !== TOKEN_PARAM) continue;
    for (const value of [query[name]].flat())
      if (typeof value === 'string' && value !== '') tokens.add(value);
    delete query[name];
  }
  if (tokens.size > 1) throw new Unauthenticated('Send one token: the query names several');
  const [token] = tokens;
  if (token !== undefined) queryTokens.set(request, token);
  return token;
}

/** The token the request's query string carried, once authentication has read it. */
export function queryToken(request: FastifyRequest): string | undefined {
  return queryTokens.get(request);
}

/** A request's credential and where it came from (the cookie is held to stricter rules: cookie-sessions.ts). */
interface Credential {
  token: string;
  from: 'query' | 'header' | 'cookie' | 'path';
}

function credentialOf(request: FastifyRequest): Credential | undefined {
  const fromQuery = takeQueryToken(request);
  if (fromQuery !== undefined) return { token: fromQuery, from: 'query' };
  const header = request.headers.authorization;
  if (header?.startsWith('Bearer ')) return { token: header.slice(7).trim(), from: 'header' };
  const cookie = request.cookies?.[TOKEN_COOKIE];
  if (cookie) return { token: cookie, from: 'cookie' };
  const param = request.routeOptions.config.credentialParam;
  const fromPath = param ? (request.params as Record<string, string | undefined>)[param] : undefined;
  return fromPath && isApiKey(fromPath) ? { token: fromPath, from: 'path' } : undefined;
}

/**
 * Resolves the caller of every request before validation, so a stranger gets 401 rather than 400.
 * `admit`, when given, runs once the caller is known, whether the credential was accepted or not:
 * the rate limits (http/rate-limits.ts) count the request against that caller, or against the
 * client's address when there is none, and may refuse it (their 429 then replaces a 401).
 */
export function registerAuthentication(
  app: FastifyInstance,
  deps: Deps,
  options: { admit?: ((request: FastifyRequest, reply: FastifyReply) => Promise<void>) | undefined } = {},
): void {
  app.decorateRequest('actor', undefined);
  app.decorateRequest('recipient', undefined);
  app.decorateRequest('actorRow', undefined);
  app.decorateRequest('authFailure', undefined);
  const { admit } = options;
  const publicOrigin = new URL(deps.config.publicUrl).origin;
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!admit) return identify(request);
    try {
      await identify(request);
    } finally {
      await admit(request, reply);
    }
  });

  /** Sets the request's actor or recipient from its token, or throws why it may not call the route. */
  const identify = async (request: FastifyRequest): Promise<void> => {
    // A route that does not exist is 404 for everyone, with or without a token (Contract: Errors).
    if (request.is404) return;
    const mode = request.routeOptions.config.auth ?? 'required';
    if (mode === 'none') return;
    const credential = credentialOf(request);
    const token = credential?.token;
    if (credential?.from === 'cookie') assertOwnSiteRequest(request, publicOrigin);
    if (token && isShareToken(token)) {
      if (mode !== 'recipient' && mode !== 'recipient-locked')
        throw new Unauthenticated('A share link works on recipient endpoints only');
      const recipient = await resolveShareToken(deps, token, request.id);
      request.recipient = recipient;
      if (recipient.standing === 'completed' && !request.routeOptions.config.signedCopies) {
        throw new Forbidden(
          'You have acted on this share: its link now only downloads what you signed (GET /share/signed)',
        );
      }
      // Contract: a protected share's link stays locked; only a recipient session that passed its
      // protections acts (POST /share/unlock gives one).
      if (mode === 'recipient' && !recipient.unlocked) {
        throw new MfaRequired(
          'This share is protected: unlock it with POST /share/unlock and use the token it answers',
        );
      }
      return;
    }
    if (token) {
      const result = await authenticate(deps, token, request.id);
      if (result.outcome === 'ok') {
        request.actor = result.actor;
        request.actorRow = result.row;
      } else request.authFailure = result.outcome;
    }
    if (mode === 'optional' && request.authFailure !== 'suspended') return;
    if (!request.actor) {
      throw new Unauthenticated(
        request.authFailure === 'suspended'
          ? 'This account is suspended'
          : request.authFailure === 'expired'
            ? 'The token has expired: log in again'
            : token
              ? 'The token is not valid'
              : request.routeOptions.config.agentEndpoint
                ? 'Authentication required: send an API key as Authorization: Bearer <key>'
                : 'Authentication required: send the token as Authorization: Bearer <token> (or the token query parameter)',
      );
    }
    if ((mode === 'required' || mode === 'recipient') && !request.actor.unlocked) throw new MfaRequired();
    assertKeyMayWrite(request, request.actor);
  };
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * An agent's key and a read-only key only read on the API (issue 42): an agent's acts go through /mcp,
 * where the consequential ones wait for a person's approval; a read-only key writes nothing anywhere.
 */
function assertKeyMayWrite(request: FastifyRequest, actor: Actor): void {
  if (!(actor.agent || actor.readOnly) || READ_METHODS.has(request.method)) return;
  if (request.routeOptions.config.agentEndpoint) return;
  throw new Forbidden(
    actor.readOnly
      ? 'This API key only reads'
      : 'An agent key only reads on the API: its acts go through /mcp and wait for a person’s approval',
  );
}

/** The caller of a recipient route: the external recipient of the link, or the internal user. */
export function recipientCallerOf(request: FastifyRequest): RecipientCaller {
  if (request.recipient) return { kind: 'external', recipient: request.recipient };
  return { kind: 'internal', actor: actorOf(request) };
}

/** The authenticated caller of a route whose mode guarantees one. */
export function actorOf(request: FastifyRequest): Actor {
  if (!request.actor) throw new Unauthenticated();
  return request.actor;
}

import type { FastifyRequest } from 'fastify';
import { Forbidden } from '../base/errors.js';

/**
 * Cookie sessions (DESIGN, Decided this round): a browser sends the session cookie with whatever
 * request any page makes to us, so a change authenticated by the cookie alone must show that our own
 * page made it. Another port or subdomain is the same *site* (SameSite does not stop it) but not the
 * same *origin*, and a form there can post `text/plain`, `application/x-www-form-urlencoded` or
 * `multipart/form-data` without the browser asking us first; only our pages' `fetch` sends JSON.
 */

/** Methods that change nothing (Contract): a cookie may authenticate them from anywhere. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The cookie's attributes: never sent by another site, never readable by script, HTTPS-only behind HTTPS. */
export function sessionCookieOptions(publicUrl: string, maxAgeSeconds: number) {
  return {
    httpOnly: true,
    sameSite: 'strict',
    secure: publicUrl.startsWith('https://'),
    path: '/',
    maxAge: maxAgeSeconds,
  } as const;
}

/**
 * Refuses (403) a state-changing request authenticated by the session cookie unless it comes from
 * our own origin: its `Origin` is PUBLIC_URL's, or that of the address it was sent to (a node reached
 * directly), or, when a browser sent none, `Sec-Fetch-Site` says `same-origin` (a client that sends
 * neither is not a page of ours) and carries a JSON body, or none; a route that takes an upload
 * (OpenAPI `consumes: multipart/form-data`) takes it as multipart.
 */
export function assertOwnSiteRequest(request: FastifyRequest, publicOrigin: string): void {
  if (SAFE_METHODS.has(request.method)) return;
  const origin = request.headers.origin;
  const fetchSite = request.headers['sec-fetch-site'];
  const fromOwnOrigin =
    origin !== undefined
      ? origin === publicOrigin || origin === `${request.protocol}://${request.host}`
      : fetchSite === 'same-origin';
  if (!fromOwnOrigin) {
    throw new Forbidden(
      'A change authenticated by the session cookie must come from this site’s own pages: send the token in the Authorization header instead',
    );
  }
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === '' ? !hasBody(request) : type === 'application/json' || acceptsUpload(request, type)) return;
  throw new Forbidden('A change authenticated by the session cookie takes a JSON body (application/json)');
}

function hasBody(request: FastifyRequest): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

function acceptsUpload(request: FastifyRequest, type: string): boolean {
  return type === 'multipart/form-data' && (request.routeOptions.schema?.consumes?.includes(type) ?? false);
}

import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** What an incoming `x-request-id` may be to be kept: a short token, nothing to escape anywhere. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * The id of a request (Fastify's `genReqId`): the caller's `x-request-id` when it is a short safe
 * token (a proxy's or a client's, so one id follows the request through every system), else a new
 * random one. It names the request in the logs (`reqId`), in audit records and in the jobs the
 * request enqueues, and is sent back as `x-request-id` (app.ts).
 */
export function requestIdOf(request: Pick<IncomingMessage, 'headers'>): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

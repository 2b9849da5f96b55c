import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { NotFound } from '../../base/errors.js';
import { isFilesOrigin, sendStoredFile } from '../answers.js';
import { Bytes, storedFileAnswers } from '../document-schemas.js';
import { errorBody } from '../error-handler.js';
import { readFileTicket } from '../file-tickets.js';
import { withErrors } from '../schemas.js';

/** The one route FILES_PUBLIC_URL's host answers. */
export const TICKET_ROUTE = '/f/:ticket/:name';

/**
 * FILES_PUBLIC_URL, the separate download origin (DESIGN, "Files answered to a browser"): a request
 * that reaches this server under that host name is answered only by TICKET_ROUTE, everything else
 * there is 404 (no page, no API, no cookie of ours is ever set or read on it); TICKET_ROUTE is 404
 * under any other host name. Runs before authentication and rate limits.
 */
export function confineFilesOrigin(server: FastifyInstance, filesOrigin: string): void {
  server.addHook('onRequest', async (request, reply) => {
    const onFilesOrigin = isFilesOrigin(request, filesOrigin);
    if (onFilesOrigin === (request.routeOptions.url === TICKET_ROUTE)) return;
    return reply.status(404).send(errorBody(404, 'No such endpoint', 'NOT_FOUND'));
  });
}

/**
 * GET FILES_PUBLIC_URL/f/<ticket>/<name>: the bytes a ticket opens (http/file-tickets.ts), with the
 * same headers as on the API's origin (sendStoredFile), readable by the signer page (CORS, no
 * credentials: the ticket is the only authority) and never cached.
 */
export function fileOriginRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      TICKET_ROUTE,
      {
        config: { auth: 'none' },
        schema: {
          // Not part of the API: the 303 of a download leads here (its `Location`), documented there.
          hide: true,
          summary: 'A download on the files origin (FILES_PUBLIC_URL)',
          description:
            'Only under FILES_PUBLIC_URL’s host, and only through the 303 of a download on the API (its `Location`). The ticket opens one file for 5 minutes; an altered, foreign or expired ticket, or a file deleted since: 404 (download it again from the API).',
          params: Type.Object({
            ticket: Type.String({ minLength: 1, maxLength: 1000 }),
            name: Type.String({ maxLength: 1000 }),
          }),
          response: withErrors({
            200: Bytes('The file’s bytes, answered as on the API (type from the bytes, nosniff, sandbox).'),
            206: storedFileAnswers()[206],
            416: storedFileAnswers()[416],
          }),
        },
      },
      async (request, reply) => {
        const ticket = readFileTicket(request.params.ticket, deps.clock.now());
        const file = ticket && (await deps.files.find(ticket.tenantId, ticket.fileId));
        if (!ticket || !file || file.sha256 !== ticket.sha256) {
          throw new NotFound('This download link is not valid any more: download the file again');
        }
        void reply
          .header('access-control-allow-origin', '*')
          .header('access-control-expose-headers', 'content-disposition, content-range, content-length')
          .header('cache-control', 'private, no-store')
          .header('cross-origin-resource-policy', 'cross-origin');
        return sendStoredFile(deps, reply, file, ticket.disposition);
      },
    );
  };
}

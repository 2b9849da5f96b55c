import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Deps } from '../../core/deps.js';
import { findAttachment, findDraftAttachment, listAttachments } from '../../documents/attachments.js';
import { zipStream } from '../../files/zip-stream.js';
import { sendStoredFile } from '../answers.js';
import { actorOf } from '../authentication.js';
import { Bytes, storedFileAnswers } from '../document-schemas.js';
import { IdParams, withErrors } from '../schemas.js';
import { FileParams } from '../../documents/contract.js';

/** Attachment downloads (they need the right `view_attachments`). The removed attachment endpoints answer 404. */
export function attachmentRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/attachments/:id/zip',
      {
        schema: {
          tags: ['attachments'],
          operationId: 'downloadAttachments',
          summary: 'All attachments of a document as one ZIP',
          description: 'Needs the right `view_attachments`.',
          params: IdParams,
          response: withErrors({ 200: Bytes('A ZIP of the attachments.', 'application/zip') }),
        },
      },
      async (request, reply) => {
        const files = await listAttachments(deps, actorOf(request), request.params.id);
        return reply
          .header('content-type', 'application/zip')
          .header('content-disposition', `attachment; filename="attachments-${request.params.id}.zip"`)
          .send(zipStream(files.map((file) => ({ name: file.name, open: () => deps.files.open(file) }))));
      },
    );

    app.get(
      '/attachments/draft/:id/:hash',
      {
        schema: {
          tags: ['attachments'],
          operationId: 'downloadDraftFile',
          summary: 'A file of one of your drafts',
          params: FileParams,
          response: withErrors({
            200: Bytes('The file’s bytes, with its own Content-Type.'),
            ...storedFileAnswers(),
          }),
        },
      },
      async (request, reply) => {
        const file = await findDraftAttachment(
          deps,
          actorOf(request),
          request.params.id,
          request.params.hash,
        );
        return sendStoredFile(deps, reply, file, 'attachment');
      },
    );

    app.get(
      '/attachments/:id/:hash',
      {
        schema: {
          tags: ['attachments'],
          operationId: 'downloadAttachment',
          summary: 'One attachment of a document',
          description: 'Needs the right `view_attachments`.',
          params: FileParams,
          response: withErrors({
            200: Bytes('The file’s bytes, with its own Content-Type.'),
            ...storedFileAnswers(),
          }),
        },
      },
      async (request, reply) => {
        const file = await findAttachment(deps, actorOf(request), request.params.id, request.params.hash);
        return sendStoredFile(deps, reply, file, 'attachment');
      },
    );
  };
}

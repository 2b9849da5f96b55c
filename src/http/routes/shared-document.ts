import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { getSharedDocument } from '../../sharing/get-shared-document.js';
import { previewSharedDocument } from '../../sharing/preview-document.js';
import { signedCopyOf } from '../../sharing/download-signed-copy.js';
import { Unauthenticated } from '../../base/errors.js';
import { recipientCallerOf } from '../authentication.js';
import { Bytes, storedFileAnswers, SharedDocumentResult } from '../document-schemas.js';
import { DocumentId } from '../../core/documents/document-contract.js';
import { DOCUMENT_EXAMPLE, SHARE_EXAMPLE } from '../../core/examples.js';
import { withErrors } from '../schemas.js';
import { sendStoredFile } from '../answers.js';

/** What a recipient reads: the shared document, its first page, and what they signed. */
export function sharedDocumentRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/share/document',
      {
        config: { auth: 'recipient' },
        schema: {
          tags: ['sharing'],
          operationId: 'getSharedDocument',
          summary: 'The shared document (recipients)',
          description:
            'With the share-link token: that share’s document, answered like GET /documents/:id (public attachments only), while the share is live; once it ended, 401; once the recipient acted, 403 (GET /share/signed downloads what they signed). Internal recipients pass `id`.',
          querystring: Type.Object({ id: Type.Optional(DocumentId) }, { additionalProperties: false }),
          response: withErrors({
            200: Type.Object(
              { results: Type.Array(SharedDocumentResult) },
              {
                description:
                  'The document, in a list of one, with the recipient’s `share` and `signatureFields`.',
                examples: [
                  {
                    results: [
                      {
                        ...DOCUMENT_EXAMPLE,
                        _version: 2,
                        workflow: { workflowType: 'wf_archive', shareStateName: 'inprogress' },
                        waitingFor: ['ivy@example.com'],
                        signatureFields: SHARE_EXAMPLE.signatureFields,
                        share: SHARE_EXAMPLE,
                      },
                    ],
                  },
                ],
              },
            ),
          }),
        },
      },
      async (request) => ({
        results: [await getSharedDocument(deps, recipientCallerOf(request), request.query.id)],
      }),
    );

    app.get(
      '/share/document/preview',
      {
        config: { auth: 'recipient' },
        schema: {
          tags: ['sharing'],
          operationId: 'getSharedDocumentPreview',
          summary: 'The shared document’s first page as an image (recipients)',
          description:
            'The first page of the document’s PDF as it is now, drawn as a WebP image 640 px wide: something to show while a PDF viewer loads. Who may call it is who may call GET /share/document (internal recipients pass `id`). Answered with an `ETag`; `If-None-Match` with it answers 304 while the PDF is unchanged. 404 when the page cannot be drawn (a PDF over 32 MB, one that takes too long to draw, or while the server is busy drawing others): show the PDF itself.',
          querystring: Type.Object({ id: Type.Optional(DocumentId) }, { additionalProperties: false }),
          response: withErrors({
            200: Bytes('The first page, as a WebP image.', 'image/webp'),
            304: Type.Null({ description: 'The copy tagged `If-None-Match` is still the first page.' }),
          }),
        },
      },
      async (request, reply) => {
        const preview = await previewSharedDocument(deps, recipientCallerOf(request), request.query.id);
        const etag = `"preview-${preview.tag}"`;
        // Kept by no browser (a contract's page on a shared computer's disk), like the page's other
        // reads; a client keeping its own copy revalidates it with the tag, at no cost in bytes.
        void reply.header('cache-control', 'private, no-store').header('etag', etag);
        if (request.headers['if-none-match'] === etag) return reply.status(304).send(null);
        return reply
          .header('content-type', preview.contentType)
          .header('content-length', preview.image.byteLength)
          .send(Buffer.from(preview.image.buffer, preview.image.byteOffset, preview.image.byteLength));
      },
    );

    app.get(
      '/share/signed',
      {
        config: { auth: 'recipient', signedCopies: true },
        schema: {
          tags: ['sharing'],
          operationId: 'downloadSignedDocument',
          summary: 'Download what you signed (external recipients)',
          description:
            'With the share-link token (any link the recipient received for the share) or a recipient session, once the recipient acted (signed, approved, …): the document as their round left it (their signature, those after it and the seal on completion; never a later round’s file), as a PDF attachment. It works for RECIPIENT_DOWNLOAD_DAYS (default 30) after they acted, and is then the only thing the link or session does: every other recipient endpoint answers 403, and /files/loadFile/hash serves only the files of that round (earlier revisions included). Afterwards, and for a share that ended otherwise, 401 UNAUTHENTICATED. Before the recipient acted: 409.',
          response: withErrors({
            200: Bytes(
              "The signed PDF, with `X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox; default-src 'none'` and `Content-Disposition: attachment`.",
              'application/pdf',
            ),
            ...storedFileAnswers('application/pdf'),
            409: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request, reply) => {
        if (!request.recipient) throw new Unauthenticated('Send the share-link token');
        return sendStoredFile(deps, reply, await signedCopyOf(deps, request.recipient), 'attachment');
      },
    );
  };
}

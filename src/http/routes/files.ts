import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { parseAnchors } from '../../files/anchors-input.js';
import { locateAnchors } from '../../files/locate-anchors.js';
import type { AnchorPosition } from '../../pdf/anchors.js';
import { findFileForRecipient, findReadableFile } from '../../files/read-file.js';
import { uploadFile, type UploadKind } from '../../files/upload-file.js';
import { actorOf } from '../authentication.js';
import { useMinified } from '../minified.js';
import { sendStoredFile } from '../answers.js';
import { readMultipart } from '../multipart.js';
import { withErrors } from '../schemas.js';
import { Bytes, FileRecordSchema, storedFileAnswers } from '../document-schemas.js';
import { FileHashParams, SaveFileParts, UploadParts } from '../../files/contract.js';

const UPLOADS: {
  path: string;
  kind: UploadKind;
  operationId: string;
  summary: string;
  description: string;
  parts: typeof UploadParts;
}[] = [
  {
    path: '/files/saveFile',
    kind: 'saveFile',
    operationId: 'uploadFile',
    summary: 'Upload a file',
    description:
      'multipart/form-data: `file`, optional `fileName`, optional `signatureAnchors` (answers `anchorPositions`). Streamed to storage; at most `dropZoneMaxSize` MB (40 by default) and within the organization’s quota, else 413 LIMIT_EXCEEDED. The answer’s `file.id` is what other calls take (a document’s `pdfFile.content`, an attachment, an image); each id is used once: a second use is 400 FILE_NOT_USABLE (documents and drafts can ask for a copy instead). Anchors: `regexp` is RE2 syntax, matched in linear time (backreferences and lookaround are 400 VALIDATION_ERROR naming the field); at most 100 anchors of at most 1,000 characters (400), at most 5,000,000 characters searched (text length × anchors) and 10,000 matches (413 LIMIT_EXCEEDED). A PDF that is read (anchors, documents, signing, verification) has at most 2,000 pages, 100,000 objects, 64 MiB decoded per stream and 256 MiB for all streams, else 413 LIMIT_EXCEEDED. A PDF whose cross-reference table is damaged (a `startxref` pointing nowhere, shifted offsets) and that carries no signature is repaired as it is stored: a rebuilt cross-reference section is appended, the original bytes untouched, and `file.repaired` says what was wrong with the size and SHA-512 of the bytes as uploaded.',
    parts: SaveFileParts,
  },
  {
    path: '/files/photo',
    kind: 'photo',
    operationId: 'uploadPhoto',
    summary: 'Upload a photo (users, contacts, enums)',
    description:
      'multipart/form-data `file`. For the `photo` of a user (POST /users, PUT /users/{id}), a contact or an enum record; each photo id may be used once.',
    parts: UploadParts,
  },
  {
    path: '/files/signature',
    kind: 'signature',
    operationId: 'uploadSignature',
    summary: 'Upload the caller’s signature image',
    description:
      'multipart/form-data `file`, optional `fileName`. Listed in `user.config.signature` as `{imageId, name}`; usable by its uploader in any number of sign calls.',
    parts: UploadParts,
  },
  {
    path: '/files/initials',
    kind: 'initials',
    operationId: 'uploadInitials',
    summary: 'Upload the caller’s initials image',
    description: 'multipart/form-data `file`, optional `fileName`. Listed in `user.config.initials`.',
    parts: UploadParts,
  },
];

/** Uploads and downloads. */
export function fileRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    useMinified(app);
    for (const upload of UPLOADS) {
      app.post(
        upload.path,
        {
          schema: {
            tags: ['files'],
            operationId: upload.operationId,
            summary: upload.summary,
            description: upload.description,
            consumes: ['multipart/form-data'],
            multipartBody: upload.parts,
            response: withErrors({ 200: FileRecordSchema, 413: Type.Ref('ErrorBody') }),
          },
        },
        async (request) => {
          const actor = actorOf(request);
          const { result, fields } = await readMultipart(request, (part, early) =>
            uploadFile(deps, actor, {
              stream: part.file,
              name: early.fileName ?? part.filename ?? 'file',
              mimetype: part.mimetype,
              kind: upload.kind,
            }),
          );
          let anchorPositions: AnchorPosition[] | undefined;
          if (fields.signatureAnchors !== undefined) {
            anchorPositions = await locateAnchors(deps, result.record, parseAnchors(fields.signatureAnchors));
          }
          if (fields.fileName && fields.fileName !== result.file.documentname) {
            await deps.db
              .updateTable('files')
              .set({ name: fields.fileName })
              .where('id', '=', result.file.id)
              .execute();
            result.file.documentname = fields.fileName;
            result.file.originalname = fields.fileName;
          }
          return {
            file: result.file,
            storage: result.storage,
            ...(anchorPositions ? { anchorPositions } : {}),
          };
        },
      );
    }

    app.get(
      '/files/loadFile/hash/:hash',
      {
        config: { auth: 'recipient', signedCopies: true },
        schema: {
          tags: ['files'],
          operationId: 'downloadFile',
          summary: 'Download a file',
          description:
            'The bytes with their Content-Type and Content-Length; a single `Range: bytes=a-b` is answered 206. Only for callers who may see the file: their own uploads, files of documents they may see (attachments need `download_attachment`). With a share-link token (of an unprotected share) or a recipient session (POST /share/unlock): the shared document’s main file, revisions and barcode, its public attachments and the share’s own uploads; the link of a protected share: 403 MFA_REQUIRED. Once the recipient acted, for RECIPIENT_DOWNLOAD_DAYS: only the files of their round (GET /share/signed); a share that ended: 401.',
          params: FileHashParams,
          response: withErrors({
            200: Bytes(
              "The file’s bytes, with the type its bytes show (never the one declared at upload: anything Signery does not handle is `application/octet-stream`), `X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox; default-src 'none'`, and `Content-Disposition: attachment` (`inline` for a PDF).",
            ),
            ...storedFileAnswers(),
          }),
        },
      },
      async (request, reply) => {
        const file = request.recipient
          ? await findFileForRecipient(deps, request.recipient, request.params.hash)
          : await findReadableFile(deps, actorOf(request), request.params.hash);
        return sendStoredFile(deps, reply, file, 'inline');
      },
    );
  };
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { getShareStampImage } from '../../sharing/uploads/get-share-stamp-image.js';
import type { ReadUpload } from '../../sharing/uploads/share-upload.js';
import { submitShareFile } from '../../sharing/uploads/submit-share-file.js';
import { uploadShareFile, type ShareFileKind } from '../../sharing/uploads/upload-share-file.js';
import { MAX_STAMP_NAME, uploadShareStamp } from '../../sharing/uploads/upload-share-stamp.js';
import { recipientCallerOf } from '../authentication.js';
import type { RecipientCaller } from '../../core/access/recipient-caller.js';
import { sendStoredFile } from '../answers.js';
import { readMultipart } from '../multipart.js';
import { IdParams, withErrors, withExamples } from '../schemas.js';
import {
  Bytes,
  IMAGE_TYPES,
  storedFileAnswers,
  FileView,
  SharedDocumentResult,
  StorageUse,
} from '../document-schemas.js';
import { EXAMPLE_IDS, FILE_RECORD_EXAMPLE } from '../../core/examples.js';
import { UploadParts } from '../../files/contract.js';

const UploadAnswer = Type.Object(
  {
    file: FileView,
    storage: StorageUse,
    results: Type.Optional(
      Type.Array(SharedDocumentResult, {
        description:
          'When the upload was added to the document: the document, answered like GET /share/document',
      }),
    ),
  },
  { examples: [FILE_RECORD_EXAMPLE] },
);

const RecipientUploadParts = withExamples(UploadParts, {
  file: '(the bytes of signature.png)',
  fileName: 'signature.png',
});

const AttachParts = Type.Object(
  {
    ...UploadParts.properties,
    attach: Type.Optional(
      Type.String({ description: '`true`: add the file to the document’s attachments.' }),
    ),
    id: Type.Optional(Type.String({ description: 'Internal recipients: the document id, before `file`.' })),
  },
  { examples: [{ file: '(the bytes of id-card.pdf)', fileName: 'id-card.pdf', attach: 'true' }] },
);

const StampParts = Type.Object(
  {
    file: UploadParts.properties.file,
    name: Type.Optional(Type.String({ description: 'The stamp’s name.' })),
  },
  { examples: [{ file: '(the bytes of company-stamp.png)', name: 'Company stamp' }] },
);

const SubmittedFileParts = Type.Object(
  {
    ...UploadParts.properties,
    fieldId: Type.Optional(Type.String({ description: 'The field (`fld_…`) the file answers.' })),
    customId: Type.Optional(Type.String({ description: 'Or the field by its `customId`.' })),
  },
  { examples: [{ file: '(the bytes of proof-of-address.pdf)', fieldId: EXAMPLE_IDS.fieldId }] },
);

const WHO =
  'With the share-link token of an unprotected share or the recipient session POST /share/unlock answers (an external recipient; the link of a protected share: 403 MFA_REQUIRED) or a session (an internal recipient, who sends the document `id` as a form field before `file`). The share must still be able to act: active, its turn, not expired (409 otherwise).';

const FILE_UPLOADS: {
  path: string;
  kind: ShareFileKind;
  operationId: string;
  summary: string;
  description: string;
  parts: TSchema;
}[] = [
  {
    path: '/share/upload/signature',
    kind: 'share-signature',
    operationId: 'uploadRecipientSignature',
    summary: 'Upload a recipient’s signature image',
    description:
      'multipart/form-data `file`, optional `fileName`. Owned by nobody, recorded with the share: only that share may use it, in any number of its sign calls. Answers like POST /files/saveFile.',
    parts: RecipientUploadParts,
  },
  {
    path: '/share/upload/initials',
    kind: 'share-initials',
    operationId: 'uploadRecipientInitials',
    summary: 'Upload a recipient’s initials image',
    description:
      'multipart/form-data `file`, optional `fileName`. Like /share/upload/signature, for initials.',
    parts: RecipientUploadParts,
  },
  {
    path: '/share/upload/file',
    kind: 'share-file',
    operationId: 'uploadRecipientFile',
    summary: 'Upload a recipient’s image or add a file to the document',
    description:
      'multipart/form-data `file`, optional `fileName`, optional `attach` (sent before `file`). Without `attach`: an image the share may use once in `images`, which must be a whole PNG or JPEG (400 VALIDATION_ERROR otherwise). With `attach=true`: the file is added to the document’s `file` list as a non-public attachment, which needs the share right `uploadFiles` (403 otherwise) and stays within the attachment limits (413); the answer then also carries `results` (the document).',
    parts: AttachParts,
  },
];

/** The multipart body of a request, handed to a use case that decides before the bytes are stored. */
function uploadOf(request: FastifyRequest): ReadUpload {
  return (save) =>
    readMultipart(request, (part, early) =>
      save(
        { stream: part.file, name: early.fileName ?? part.filename ?? 'file', mimetype: part.mimetype },
        early,
      ),
    );
}

/** The recipients’ uploads (POST /share/upload/*) and their stamps’ images (GET /share/stamp/{id}). */
export function shareUploadRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    /**
     * A recipient's multipart upload (who may send one: WHO; 409 when the share cannot act, 413 over
     * the upload limits): `take` hands it to its use case, which decides before the bytes are stored.
     */
    const recipientUpload = (
      path: string,
      words: { operationId: string; summary: string; description: string; parts: TSchema },
      answer: TSchema,
      take: (caller: RecipientCaller, upload: ReadUpload) => Promise<unknown>,
    ) =>
      app.post(
        path,
        {
          config: { auth: 'recipient' },
          schema: {
            tags: ['sharing'],
            operationId: words.operationId,
            summary: words.summary,
            description: `${words.description} ${WHO}`,
            consumes: ['multipart/form-data'],
            multipartBody: words.parts,
            response: withErrors({ 200: answer, 409: Type.Ref('ErrorBody'), 413: Type.Ref('ErrorBody') }),
          },
        },
        async (request) => take(recipientCallerOf(request), uploadOf(request)),
      );

    for (const file of FILE_UPLOADS) {
      recipientUpload(file.path, file, UploadAnswer, (caller, upload) =>
        uploadShareFile(deps, caller, upload, file.kind),
      );
    }

    recipientUpload(
      '/share/upload/stamp',
      {
        operationId: 'uploadRecipientStamp',
        summary: 'Upload a recipient’s stamp',
        parts: StampParts,
        description: `multipart/form-data \`file\` (PNG or JPEG), optional \`name\` (1 to ${MAX_STAMP_NAME} characters, 400 otherwise). Creates a stamp owned by the share and answers its id \`{id}\`: a signature entry of type \`stamp\` of that share names it in \`blob\`; GET /share/stamp/{id} shows it.`,
      },
      Type.Object(
        { id: Type.String({ description: 'The stamp id' }) },
        { examples: [{ id: EXAMPLE_IDS.stampId }] },
      ),
      (caller, upload) => uploadShareStamp(deps, caller, upload),
    );

    recipientUpload(
      '/share/upload/submittedFile',
      {
        operationId: 'submitRecipientFile',
        summary: 'Submit a file for a signature field',
        parts: SubmittedFileParts,
        description: `multipart/form-data \`file\` and \`fieldId\` and/or \`customId\`: one of the share’s signature fields of subtype \`annotation_submitted_file\`, named by its \`fieldId\` (every field of a share has one, shown in the Share objects and GET /share/document) or its \`customId\` (400 otherwise, or when the two name different fields). The file joins the document’s \`submittedFiles\` (each with the \`field\` it answers). Until the recipient signs or otherwise acts, a new file for the same field replaces their own earlier one, in its place; once they have acted it stays, and a file another recipient submitted for the field is 409 CONFLICT. The document changes (\`_version\` + 1, \`documentEdited\`); the answer carries the file, \`storage\` and \`results\` (the document, like GET /share/document).`,
      },
      UploadAnswer,
      (caller, upload) => submitShareFile(deps, caller, upload),
    );

    app.get(
      '/share/stamp/:id',
      {
        config: { auth: 'recipient' },
        schema: {
          tags: ['sharing'],
          operationId: 'downloadRecipientStamp',
          summary: 'A stamp’s image (recipients)',
          description:
            'The image of a stamp uploaded with POST /share/upload/stamp: to that share (its unlocked share-link token or recipient session) and to the document’s owner and its organization’s administrators (session). Internal users also get the stamps they may use. 404 to anyone else.',
          params: IdParams,
          response: withErrors({
            200: Bytes('The stamp’s image (PNG or JPEG).', IMAGE_TYPES),
            ...storedFileAnswers(IMAGE_TYPES),
          }),
        },
      },
      async (request, reply) => {
        const file = await getShareStampImage(deps, recipientCallerOf(request), request.params.id);
        return sendStoredFile(deps, reply, file, 'inline');
      },
    );
  };
}

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { createDocument, createDocuments, type NewDocument } from '../../documents/create-document.js';
import { deleteDocuments } from '../../documents/delete-documents.js';
import { editDocument } from '../../documents/edit-document.js';
import { getDocument } from '../../documents/get-document.js';
import { getRevision } from '../../documents/get-revision.js';
import { mergeDocument } from '../../documents/merge-document.js';
import { transferOwner } from '../../documents/transfer-owner.js';
import { updateDocument } from '../../documents/update-document.js';
import { actorOf } from '../authentication.js';
import { useMinified } from '../minified.js';
import { DocumentResult, FileView } from '../document-schemas.js';
import { DocumentId, Version } from '../../core/documents/document-contract.js';
import { DOCUMENT_EXAMPLE, EXAMPLE_IDS, FILE_RECORD_EXAMPLE } from '../../core/examples.js';
import { withErrors } from '../schemas.js';
import {
  BulkCreateBody,
  CreateDocumentBody,
  DeleteDocumentsBody,
  EditDocumentBody,
  MergeBody,
  TransferOwnerBody,
  UpdateDocumentBody,
} from '../../documents/contract.js';
import { SIGNING_WARNINGS } from './signing.js';

const VISUALS_RULES =
  'Entries as in PUT /documents/sign/{version} and /annotate/{version}, with the same rules and messages: signature and initials images from POST /files/signature|initials, `images` unused uploads from POST /files/saveFile or the document’s `barcode`, stamps by id, positions 0..1. With `signatures` the main file is signed with the organisation key in the caller’s name (PAdES, `level` or the tenant’s `defaultPadesLevel`) and `isSigned` becomes true; `images`/`annotations` alone annotate it without a signature. The main file gets a new id (the old one stays a revision) and the answer’s `signing` says which level was reached (`fellBack` when the TSA failed). All of it is one change: on any error nothing is written and no file is used up.';

const Signing = Type.Optional(
  Type.Object(
    {
      levelAchieved: Type.String(),
      fellBack: Type.Boolean({
        description: 'True when the TSA failed and the signature was made at a lower level.',
      }),
      reason: Type.Optional(Type.String()),
      warnings: Type.Optional(Type.Array(Type.String(), { description: SIGNING_WARNINGS })),
    },
    { description: 'Present when the call signed the document.' },
  ),
);

/** What a document type asks of the documents made of it, and of who makes them. */
const TYPE_RULES =
  'The caller needs rights on both folder and document type: a type whose definition’s `usableBy` leaves the caller out is 403 FORBIDDEN, a folder the caller does not see is 400 naming `optionalData.folder`. `body.customFields` must hold the fields the type’s definition marks `required` (`fields[].required`), with non-empty values and the described types: 400 VALIDATION_ERROR naming the missing field otherwise.';

const Results = Type.Object(
  { results: Type.Array(DocumentResult) },
  { description: 'The document, in a list of one.', examples: [{ results: [DOCUMENT_EXAMPLE] }] },
);
const SignedResults = Type.Object(
  { results: Type.Array(DocumentResult), signing: Signing },
  { description: 'The document, in a list of one.', examples: [{ results: [DOCUMENT_EXAMPLE] }] },
);
const DeleteAnswer = Type.Object(
  {
    errors: Type.Boolean({ description: 'true when some could not be deleted (listed in `items`).' }),
    count: Type.Integer({ description: 'How many were deleted.' }),
    items: Type.Array(
      Type.Object({ id: Type.String(), title: Type.Optional(Type.String()), error: Type.String() }),
    ),
  },
  { examples: [{ errors: false, count: 2, items: [] }] },
);

const Revision = Type.Object(
  {
    documentId: Type.String(),
    revision: Type.Integer(),
    reason: Type.String({
      description:
        'What made it: `created`, `signed`, `sealed`, `annotated`, `merged`, `replaced`, `archiveRenewed`.',
    }),
    actor: Type.Union([Type.String(), Type.Null()]),
    createDate: Type.String(),
    pdfFile: FileView,
    revisions: Type.Integer({ description: 'How many revisions the document has, to walk them.' }),
  },
  {
    examples: [
      {
        documentId: EXAMPLE_IDS.documentId,
        revision: 1,
        reason: 'created',
        actor: EXAMPLE_IDS.userId,
        createDate: '2026-03-01T08:00:02.000Z',
        pdfFile: FILE_RECORD_EXAMPLE.file,
        revisions: 3,
      },
    ],
  },
);

/**
 * A create call's `body` and root (`definitionType`, `workflow`, `optionalData`) as the use case takes them.
 */
function toNew(
  body: Static<typeof CreateDocumentBody>['body'],
  root: Pick<Static<typeof CreateDocumentBody>, 'definitionType' | 'workflow' | 'optionalData'>,
): NewDocument {
  return {
    documentTitle: body.documentTitle,
    documentType: body.documentType ?? 'd_default',
    definitionType: root.definitionType,
    workflow: root.workflow,
    pdfFile: body.pdfFile,
    file: body.file,
    customTemplate: body.customTemplate,
    customFields: body.customFields,
    folder: root.optionalData?.folder,
    cloneMainFile: root.optionalData?.cloneMainFile,
    cloneFiles: root.optionalData?.cloneFiles,
    visuals: root.optionalData && {
      signatures: root.optionalData.signatures,
      images: root.optionalData.images,
      annotations: root.optionalData.annotations,
      level: root.optionalData.level,
    },
  };
}

/** Documents: create, read, change, merge, transfer, delete, and their kept revisions. */
export function documentRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    useMinified(app);
    app.post(
      '/documents',
      {
        schema: {
          tags: ['documents'],
          operationId: 'createDocument',
          summary: 'Create a document',
          description: `The document’s own fields go inside \`body\` (\`{"body": {"documentTitle": …, "pdfFile": {"content": <file id>}}}\`); beside it, at the root, how it is made: \`definitionType\`, \`workflow\` and \`optionalData\` (folder, copies, signing as it is created). The main file (\`body.pdfFile.content\`) and attachments (\`body.file\`) must be unused uploads from POST /files/saveFile, or used only in a draft, unless \`optionalData.cloneMainFile\`/\`cloneFiles\` is set (400 FILE_NOT_USABLE naming the field). A barcode (QR code PNG pointing at the verification address) is made for each document. At most 20 attachments totalling min(5 × dropZoneMaxSize, 1 GB) (413 LIMIT_EXCEEDED).\n\n${TYPE_RULES}\n\n\`optionalData.signatures\`, \`images\`, \`annotations\` sign or annotate the new document in the same call. ${VISUALS_RULES} The document then has revision 1 (as uploaded) and 2 (signed) and \`_version\` 1; errors name the fields under \`optionalData.\` (e.g. \`"optionalData.signatures[0].position.percentX" must be less than or equal to 1\`).`,
          body: CreateDocumentBody,
          response: withErrors({ 200: SignedResults, 413: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => {
        const created = await createDocument(deps, actorOf(request), toNew(request.body.body, request.body));
        return { results: [created.document], ...(created.signing ? { signing: created.signing } : {}) };
      },
    );

    app.post(
      '/documents/bulk/create',
      {
        schema: {
          tags: ['documents'],
          operationId: 'createDocuments',
          summary: 'Create one document per file',
          description: `Creates a document for each of \`bulkFiles\` (at most 100; 413 beyond) with the common \`body\` fields, all or none, in one request; the answer lists them in order with \`count\`. File rules as for POST /documents. ${TYPE_RULES}`,
          body: BulkCreateBody,
          response: withErrors({
            200: Type.Object(
              { count: Type.Integer(), results: Type.Array(DocumentResult) },
              { examples: [{ count: 1, results: [DOCUMENT_EXAMPLE] }] },
            ),
            413: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request) => {
        const { body, bulkFiles } = request.body;
        const inputs = bulkFiles.map((f, i) =>
          toNew(
            {
              ...body,
              documentTitle: f.documentTitle ?? `Document ${i + 1}`,
              pdfFile: { content: f.content },
            },
            request.body,
          ),
        );
        const results = await createDocuments(deps, actorOf(request), inputs);
        return { count: results.length, results };
      },
    );

    app.get(
      '/documents/:documentId',
      {
        schema: {
          tags: ['documents'],
          operationId: 'getDocument',
          summary: 'Read a document',
          description:
            'With `_version`, `isSigned`, `workflow`, `folder`, `owner`, `waitingFor`, `customFields`, `file` (with view_attachments) and `submittedFiles`.',
          params: Type.Object({ documentId: DocumentId }),
          response: withErrors({ 200: Results }),
        },
      },
      async (request) => ({
        results: [await getDocument(deps, actorOf(request), request.params.documentId)],
      }),
    );

    app.put(
      '/documents/owner',
      {
        schema: {
          tags: ['documents'],
          operationId: 'transferDocumentOwner',
          summary: 'Transfer ownership',
          description:
            'When the tenant setting `ownerTransferEnabled` is on: `owner` is a user id or login name. `version`, when given, must be current.',
          body: TransferOwnerBody,
          response: withErrors({ 200: Results, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => ({ results: [await transferOwner(deps, actorOf(request), request.body)] }),
    );

    app.put(
      '/documents/edit/:version',
      {
        schema: {
          tags: ['documents'],
          operationId: 'editDocument',
          summary: 'Edit a document’s or folder’s metadata, or move it',
          description:
            '`folder` moves it into a folder (null: to the root); `isShared` for folders: it decides on a top-level folder; a nested folder takes its parent’s setting, so its own counts only once it is moved to the root. `file` (the whole attachment list) and `pdfFile` (a new main file, external documents, before any signature) as in PUT /documents/{version}: new files must be unused or used only in a draft. Changed `customFields` must keep the fields the document type’s definition requires (400 naming the missing one). Compare-and-set on the version.',
          params: Type.Object({ version: Version }),
          body: EditDocumentBody,
          response: withErrors({ 200: Results, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => {
        const { id, ...changes } = request.body;
        return {
          results: [
            await editDocument(deps, actorOf(request), { id, version: request.params.version, changes }),
          ],
        };
      },
    );

    // The spec's `PUT /documents/:version`: the path holds the version and the body `id` names the
    // document. The position is `{documentId}` in GET /documents/{documentId}, and an OpenAPI document
    // gives one position one name (two names make two "equivalent" paths, an error to its linters and
    // a guess for generated clients), so the parameter is named `documentId` and says what it holds.
    app.put(
      '/documents/:documentId',
      {
        schema: {
          tags: ['documents'],
          operationId: 'updateDocument',
          summary: 'Change a document',
          description: `Fields of \`body\` given replace the stored ones; \`file\` is the whole attachment list (new ids are added, missing ones removed); a new \`pdfFile\` (external documents, before any signature) becomes the main file and the old one stays a revision. New files must be unused or used only in a draft. Compare-and-set on the version. A new \`documentType\` must be one the caller may use (403 otherwise), and a change of \`documentType\` or \`customFields\` must leave the fields the type requires (400 naming the missing one; a change touching neither passes).\n\nRoot \`signatures\`, \`images\`, \`annotations\` (and \`level\`), as in PUT /documents/sign/{version}, sign or annotate the main file (the new one when \`pdfFile\` is given) in the same call. ${VISUALS_RULES} The call bumps \`_version\` once.`,
          params: Type.Object({
            documentId: Type.Integer({
              minimum: 1,
              description:
                'For this call, the document’s current `_version` (409 when stale), not its id: the document is named by the body’s `id`.',
            }),
          }),
          body: UpdateDocumentBody,
          response: withErrors({
            200: SignedResults,
            409: Type.Ref('ErrorBody'),
            413: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request) => {
        const { id, body, ...visuals } = request.body;
        const updated = await updateDocument(deps, actorOf(request), {
          id,
          version: request.params.documentId,
          changes: body,
          visuals,
        });
        return { results: [updated.document], ...(updated.signing ? { signing: updated.signing } : {}) };
      },
    );

    app.put(
      '/documents/:documentId/merge',
      {
        schema: {
          tags: ['documents'],
          operationId: 'mergeDocument',
          summary: 'Merge PDFs into the main file',
          description:
            'Appends the PDFs of `files` (unused uploads) to the main file, which gets a new id; refused once signed.',
          params: Type.Object({ documentId: DocumentId }),
          body: MergeBody,
          response: withErrors({ 200: Results, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => ({
        results: [
          await mergeDocument(deps, actorOf(request), {
            id: request.params.documentId,
            version: request.body.version,
            files: request.body.files,
          }),
        ],
      }),
    );

    app.delete(
      '/documents',
      {
        schema: {
          tags: ['documents'],
          operationId: 'deleteDocuments',
          summary: 'Delete documents and folders',
          description:
            'Soft by default: the document is hidden and its shares end (a process `inprogress` becomes `cancelled`, active and waiting shares `cancelled`; their links answer 401). `hardDelete=true` is permanent, and works on a soft-deleted document too (for its owner or an administrator): the document, its revisions, attachments, shares and their credentials, its recipients’ uploads and every file record only it used go at once (GET /files/loadFile/hash answers 404), then their bytes unless another file has the same content. The audit record of the deletion keeps ids and hashes only. A folder takes its nested folders and documents with it; each needs edit permission as its owner or an administrator of its organization (a user a document is shared with for `edit` changes it but does not delete it). `items` lists what was not deleted (and `errors` is true); the rest is deleted.',
          querystring: Type.Object(
            { hardDelete: Type.Optional(Type.Boolean({ default: false })) },
            { additionalProperties: false },
          ),
          body: DeleteDocumentsBody,
          response: withErrors({ 200: DeleteAnswer, 413: Type.Ref('ErrorBody') }),
        },
      },
      async (request) =>
        deleteDocuments(deps, actorOf(request), {
          ids: request.body.documents.map((d) => d.id),
          hardDelete: request.query.hardDelete === true,
        }),
    );

    app.get(
      '/revisions/document/:id/:revision',
      {
        schema: {
          tags: ['documents'],
          operationId: 'getRevision',
          summary: 'Read a kept version of the main file',
          description:
            'Revision 1 is the main file as created; each sign, seal, merge or replacement adds one. The bytes: GET /files/loadFile/hash/{pdfFile.id}.',
          params: Type.Object({ id: DocumentId, revision: Type.Integer({ minimum: 1 }) }),
          response: withErrors({ 200: Revision }),
        },
      },
      async (request) => getRevision(deps, actorOf(request), request.params),
    );
  };
}

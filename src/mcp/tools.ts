import { Readable } from 'node:stream';
import { Type, type Static, type TSchema } from 'typebox';
import { proposeAgentAction } from '../agents/propose-agent-action.js';
import type { Actor } from '../core/access/actor.js';
import type { Deps } from '../core/deps.js';
import { DocumentId, Position, SignatureField } from '../core/documents/document-contract.js';
import { LimitExceeded, ValidationError } from '../base/errors.js';
import { CreateDocumentBody } from '../documents/contract.js';
import { createDocument } from '../documents/create-document.js';
import { getDocument } from '../documents/get-document.js';
import { parseAnchors } from '../files/anchors-input.js';
import { locateAnchors } from '../files/locate-anchors.js';
import { findReadableFile } from '../files/read-file.js';
import { uploadFile } from '../files/upload-file.js';
import { SearchBody } from '../search/contract.js';
import { searchDocuments } from '../search/search-documents.js';
import { RecipientData, RemindersBody, ShareBody } from '../sharing/contract.js';
import { verifyDocument } from '../signing/verify-document.js';
import { documentRecipients } from './document-recipients.js';
import { DEFAULT_FEED_PAGE, listEvents, MAX_FEED_PAGE } from '../webhooks/list-events.js';

/**
 * The MCP tools (issue 42, Deliver 2; their names are stable API: DESIGN, Agents). Each input schema
 * is built from the API's own TypeBox schemas (the contracts), so a tool takes what the matching
 * call takes; each description is written for a model. `write`: refused to a read-only key.
 * `consequential`: the tool never acts, it proposes (agents/propose-agent-action.ts) and a person
 * approves (src/mcp/acts.ts runs the act then).
 */
export interface AgentTool<S extends TSchema = TSchema> {
  name: string;
  title: string;
  description: string;
  input: S;
  write: boolean;
  consequential: boolean;
  /** The document a call is about, when it names one (its audit record goes on that document). */
  documentOf?: (args: Static<S>) => string | undefined;
  run: (deps: Deps, actor: Actor, args: Static<S>) => Promise<ToolAnswer>;
}

/** What a tool answers: JSON for the model, and optionally a file. */
export interface ToolAnswer {
  json: unknown;
  file?: { name: string; mimeType: string; base64: string };
}

function tool<S extends TSchema>(definition: AgentTool<S>): AgentTool {
  return definition;
}

const byId = Type.Object({ documentId: DocumentId }, { additionalProperties: false });

const PENDING =
  'It does NOT act: it records a pending action that a person must approve (GET /agent-actions, POST /agent-actions/{id}/approve) and answers {pendingActionId, state: "pending"}. Tell the user an approval is waiting; to learn the outcome, call list_events and wait for agentActionApproved or agentActionRejected on this document (or get_document).';

/** prepare_share's recipients: the ones of POST /share, without `password` (a pending action is kept readable, a password must not be). */
const AgentRecipient = Type.Omit(RecipientData, ['password']);
const PrepareShareInput = Type.Object(
  {
    ...ShareBody.properties,
    data: Type.Array(AgentRecipient, { minItems: 1, maxItems: 1000 }),
  },
  { additionalProperties: false },
);

/** send_reminder: the body of POST /share/reminder, with the document it is about always named. */
const SendReminderInput = Type.Object(
  { ...RemindersBody.properties, documentId: DocumentId },
  { additionalProperties: false },
);

const UploadPdfInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 255, description: 'The file name, e.g. "NDA.pdf".' }),
    contentBase64: Type.String({
      minLength: 1,
      description: 'The PDF bytes, base64. No URL: Signery never fetches a file for an agent.',
    }),
  },
  { additionalProperties: false },
);

const createBody = CreateDocumentBody.properties.body.properties;
const CreateDocumentInput = Type.Object(
  {
    documentTitle: createBody.documentTitle,
    fileId: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'The `fileId` upload_pdf answered: the document’s main file.',
    }),
    documentType: createBody.documentType,
    customFields: createBody.customFields,
    folder: CreateDocumentBody.properties.optionalData.properties.folder,
  },
  { additionalProperties: false },
);

const Anchor = Type.Object(
  {
    text: Type.Optional(
      Type.String({ minLength: 1, maxLength: 1000, description: 'Text to find in the PDF.' }),
    ),
    regexp: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: 'Or an RE2 pattern.' })),
    offset: Type.Optional(
      Type.Partial(Position, {
        description:
          'Where the field sits from the top-left corner of the match, in fractions of the page (may be negative).',
      }),
    ),
  },
  { additionalProperties: false },
);

const PlaceFieldsInput = Type.Object(
  {
    documentId: DocumentId,
    fields: Type.Array(
      Type.Object(
        {
          ...Type.Omit(SignatureField, ['position']).properties,
          position: Type.Optional(Position),
          anchor: Type.Optional(Anchor),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 100 },
    ),
  },
  { additionalProperties: false },
);

const ListEventsInput = Type.Object(
  {
    after: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'The `cursor` of the previous answer.' }),
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_FEED_PAGE, default: DEFAULT_FEED_PAGE })),
  },
  { additionalProperties: false },
);

const HEADLINES: Record<string, string> = {
  valid: 'Every signature is intact and trusted, and nothing after a signature went beyond what is allowed.',
  changed:
    'A revision after a signature changed content that signature covers: the signed version is not what is shown now.',
  invalid:
    'A signature is broken (the bytes it covers changed) or the embedded audit trail does not check out.',
  unconfirmed:
    'The signatures are intact, but a signer’s certificate chain is not trusted here or its revocation status is not established.',
  unsigned: 'The document carries no signature.',
};

/** The tools, in the order tools/list names them. */
export function agentTools(deps: Deps): AgentTool[] {
  return [
    tool({
      name: 'find_documents',
      title: 'Find documents',
      description:
        'Search the documents the user may see: by words of the title (`text`), state (`shareStateName`: draft, inprogress, completed, rejected, cancelled, expired), signed or not (`isSigned`), folder. Each result shows the document’s state and `waitingFor` (who still has to act). Paged with `from` and `size` (at most 100).',
      input: SearchBody,
      write: false,
      consequential: false,
      run: async (d, actor, args) => ({ json: await searchDocuments(d, actor, args) }),
    }),
    tool({
      name: 'get_document',
      title: 'Read a document',
      description:
        'One document by id: its title, state (`workflow.shareStateName`), whether it is signed, who still has to act (`waitingFor`), its custom fields, its main file (`pdfFile`) and version, and `recipients`: each recipient in the order they act, with their purpose, status, what they still owe in words (`owes`: "sign, now", "sign, after the recipients before them", "nothing: done", …) and, while they owe it, the fields they will be asked to fill. Use it to check progress after a share was approved.',
      input: byId,
      write: false,
      consequential: false,
      documentOf: (args) => args.documentId,
      run: async (d, actor, args) => {
        const document = await getDocument(d, actor, args.documentId);
        return { json: { ...document, recipients: await documentRecipients(d.db, document.documentId) } };
      },
    }),
    tool({
      name: 'upload_pdf',
      title: 'Upload a PDF',
      description: `Store a PDF given as base64 (at most ${Math.floor(deps.config.mcpMaxFileBytes / 1024 / 1024)} MiB decoded; Signery never downloads a URL for an agent). Answers \`fileId\`, to pass to create_document. A file id is used once.`,
      input: UploadPdfInput,
      write: true,
      consequential: false,
      run: async (d, actor, args) => {
        const bytes = decodeBase64(args.contentBase64, d.config.mcpMaxFileBytes);
        const uploaded = await uploadFile(d, actor, {
          stream: Readable.from([bytes]),
          name: args.name,
          mimetype: 'application/pdf',
          kind: 'saveFile',
        });
        return { json: { fileId: uploaded.file.id, name: args.name, size: bytes.length } };
      },
    }),
    tool({
      name: 'create_document',
      title: 'Create a document',
      description:
        'Create a document from a PDF uploaded with upload_pdf (`fileId`), with a title and optionally custom fields and a folder. Nothing is sent or signed. Answers the document (its `documentId` is what the other tools take).',
      input: CreateDocumentInput,
      write: true,
      consequential: false,
      run: async (d, actor, args) => {
        const created = await createDocument(d, actor, {
          documentTitle: args.documentTitle,
          documentType: args.documentType ?? 'd_default',
          pdfFile: { content: args.fileId },
          customFields: args.customFields,
          folder: args.folder,
        });
        return { json: created.document };
      },
    }),
    tool({
      name: 'place_fields',
      title: 'Place signature fields',
      description:
        'Work out where the fields of a share go, by anchor text (`anchor.text` or `anchor.regexp`: one field per match, `anchor.offset` from the match’s top-left corner) or by `position` (fractions of the page, origin top left) and `pages`. Answers `signatureFields` to pass unchanged to prepare_share (set each field’s `user` to the recipient who fills it). The document itself is not changed.',
      input: PlaceFieldsInput,
      write: false,
      consequential: false,
      documentOf: (args) => args.documentId,
      run: async (d, actor, args) => ({ json: { signatureFields: await placeFields(d, actor, args) } }),
    }),
    tool({
      name: 'prepare_share',
      title: 'Share a document for signature (needs approval)',
      description: `Share a document with recipients, exactly as POST /share takes it: \`id\` (the document), \`data\` (each recipient: \`shareTo\` an e-mail or user name, \`sharePurpose\` sign/approve/review/view, \`message\`, \`validUntil\`, \`order\`, protections such as \`emailCode\` or \`phone\`), \`signatureFields\` (from place_fields), \`sequential\`. ${PENDING}`,
      input: PrepareShareInput,
      write: true,
      consequential: true,
      documentOf: (args) => args.id,
      run: async (d, actor, args) => ({
        json: await proposeAgentAction(d, actor, {
          tool: 'prepare_share',
          documentId: args.id,
          request: args,
        }),
      }),
    }),
    tool({
      name: 'send_reminder',
      title: 'Remind recipients (needs approval)',
      description: `Remind the recipients of a document who have not acted yet (by \`documentId\`, or only some \`shares\`), by e-mail (or SMS with the add-on). At most one reminder per day per share. ${PENDING}`,
      input: SendReminderInput,
      write: true,
      consequential: true,
      documentOf: (args) => args.documentId,
      run: async (d, actor, args) => ({
        json: await proposeAgentAction(d, actor, {
          tool: 'send_reminder',
          documentId: args.documentId,
          request: args,
        }),
      }),
    }),
    tool({
      name: 'verify_document',
      title: 'Verify a document',
      description:
        'Check the signatures of a document’s current file and explain the verdict: `headline` (valid, changed, invalid, unconfirmed, unsigned), `explanation` in plain words, and for each signature who signed, when, and what changed after it. Tell the user the headline and explanation; do not call a document valid unless the headline is valid.',
      input: byId,
      write: false,
      consequential: false,
      documentOf: (args) => args.documentId,
      run: async (d, actor, args) => {
        const report = await verifyDocument(d, actor, { id: args.documentId, dss: false, evidence: false });
        return {
          json: {
            headline: report.verdict.headline,
            explanation: `${HEADLINES[report.verdict.headline] ?? ''} ${report.verdict.reason}`.trim(),
            ...report,
          },
        };
      },
    }),
    tool({
      name: 'download_signed_pdf',
      title: 'Download the signed PDF',
      description: `The document’s current file (the signed one once signed), as a PDF resource in base64, with whether it is signed and its state. At most ${Math.floor(deps.config.mcpMaxFileBytes / 1024 / 1024)} MiB: a larger file is refused (the user downloads it from Signery).`,
      input: byId,
      write: false,
      consequential: false,
      documentOf: (args) => args.documentId,
      run: async (d, actor, args) => {
        const document = await getDocument(d, actor, args.documentId);
        if (!document.pdfFile) throw new ValidationError('documentId', 'names a document without a file');
        const file = await findReadableFile(d, actor, document.pdfFile.content);
        if (Number(file.size) > d.config.mcpMaxFileBytes)
          throw new LimitExceeded(
            `The file is larger than ${d.config.mcpMaxFileBytes} bytes: download it from Signery`,
          );
        const bytes = await d.files.read(file);
        return {
          json: {
            documentId: document.documentId,
            name: file.name,
            isSigned: document.isSigned,
            state: document.workflow.shareStateName ?? null,
            size: bytes.length,
          },
          file: {
            name: file.name,
            mimeType: 'application/pdf',
            base64: Buffer.from(bytes).toString('base64'),
          },
        };
      },
    }),
    tool({
      name: 'list_events',
      title: 'List recent events',
      description:
        'What happened, in order, after `after` (the `cursor` of your previous call; none: the oldest kept): documentCreated, signRequest, documentSigned, documentCompleted, signRejected, … and, for what you proposed, agentActionPending, agentActionApproved, agentActionRejected, agentActionInterrupted (approved, but the act did not finish: read the document before proposing it again). Call again with the answer’s `cursor` to wait for news instead of reading documents over and over. Needs the right use_webhooks.',
      input: ListEventsInput,
      write: false,
      consequential: false,
      run: async (d, actor, args) => ({ json: await listEvents(d, actor, args) }),
    }),
  ];
}

/** Base64 to bytes within `limit`, refusing what is not base64 rather than decoding it loosely. */
function decodeBase64(text: string, limit: number): Buffer {
  const compact = text.replace(/\s+/g, '');
  if (compact.length > Math.ceil(limit / 3) * 4 + 4)
    throw new LimitExceeded(`The PDF is larger than ${limit} bytes`);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 !== 0)
    throw new ValidationError('contentBase64', 'must be base64');
  const bytes = Buffer.from(compact, 'base64');
  if (bytes.length > limit) throw new LimitExceeded(`The PDF is larger than ${limit} bytes`);
  return bytes;
}

type FieldRequest = Static<typeof PlaceFieldsInput>['fields'][number];

/** Fields placed by position or anchor, as POST /share's `signatureFields` takes them. */
async function placeFields(
  deps: Deps,
  actor: Actor,
  args: Static<typeof PlaceFieldsInput>,
): Promise<Static<typeof SignatureField>[]> {
  const document = await getDocument(deps, actor, args.documentId);
  const placed: Static<typeof SignatureField>[] = [];
  const anchored: { index: number; field: FieldRequest }[] = [];
  for (const [index, field] of args.fields.entries()) {
    const { anchor, position, ...rest } = field;
    if (anchor === undefined) {
      if (position === undefined)
        throw new ValidationError(`fields[${index}]`, 'needs a position or an anchor');
      placed.push({ ...rest, position });
    } else anchored.push({ index, field });
  }
  if (anchored.length === 0) return placed;
  if (!document.pdfFile) throw new ValidationError('documentId', 'names a document without a file');
  const file = await findReadableFile(deps, actor, document.pdfFile.content);
  // The anchors go through the one parser of POST /files/saveFile's `signatureAnchors`.
  const requests = parseAnchors(
    JSON.stringify(anchored.map(({ index, field }) => ({ id: String(index), ...field.anchor }))),
  );
  const found = await locateAnchors(deps, file, requests);
  for (const { index, field } of anchored) {
    const { anchor: _anchor, position: _position, ...rest } = field;
    const matches = found.find((a) => a.id === String(index))?.fields ?? [];
    if (matches.length === 0)
      throw new ValidationError(`fields[${index}].anchor`, 'was not found in the document');
    for (const match of matches) placed.push({ ...rest, pages: [match.page], position: match.position });
  }
  return placed;
}

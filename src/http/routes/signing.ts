import { buffer } from 'node:stream/consumers';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Actor } from '../../core/access/actor.js';
import { Type, type Static } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { Unauthenticated } from '../../base/errors.js';
import { annotateDocument } from '../../signing/annotate-document.js';
import { sealDocument } from '../../signing/seal-document.js';
import { signDocument } from '../../core/signing/sign-document.js';
import { VerificationReport } from '../../signing/verification-report.js';
import { verifyDocument, verifyUpload } from '../../signing/verify-document.js';
import { actorOf } from '../authentication.js';
import { DocumentId, Version } from '../../core/documents/document-contract.js';
import { readMultipart } from '../multipart.js';
import { SIGN_OUTCOME_EXAMPLE } from '../../core/examples.js';
import { withErrors, withExamples } from '../schemas.js';
import { AnnotateBody, SealBody } from '../../signing/contract.js';
import { SignBody } from '../../core/signing/sign-contract.js';

const VERIFY_EXAMPLE = {
  signatures: [
    {
      fieldName: 'Signature1',
      kind: 'signature',
      subFilter: 'ETSI.CAdES.detached',
      byteRange: [0, 1350, 34120, 595],
      byteRangeValid: true,
      coversWholeFile: true,
      revisionsAfter: 0,
      digestValid: true,
      signatureValid: true,
      certificate: {
        trusted: true,
        chain: ['CN=Example Ltd seal, O=Example Ltd', 'CN=Example Ltd root CA, O=Example Ltd'],
        revocation: 'good',
        revocationSources: ['ocsp'],
        revocationData: [],
        problems: [],
      },
      documentTimestamps: [],
      indication: 'TOTAL_PASSED',
      modifications: [],
      verdict: 'valid',
      problems: [],
      warnings: [],
      signerName: 'ivy@example.com',
      signer: {
        commonName: 'Example Ltd seal',
        subjectText: 'CN=Example Ltd seal, O=Example Ltd',
        issuerText: 'CN=Example Ltd root CA, O=Example Ltd',
        notBefore: '2026-01-01T00:00:00.000Z',
        notAfter: '2029-01-01T00:00:00.000Z',
        sha256: '6861391b2941ea975e227b2b888c943271065410ae310a5592be292715c433f3',
      },
      claimedSigningTime: '2026-03-01T08:05:11.000Z',
      level: 'B-B',
    },
  ],
  validationTime: '2026-03-01T09:00:00.000Z',
  verdict: {
    headline: 'valid',
    reason:
      'Every signature is intact and confirmed, and nothing after any of them went beyond what is allowed after a signature',
  },
};

const VerifyParts = Type.Object(
  { file: Type.String({ format: 'binary', description: 'The PDF to check.' }) },
  { examples: [{ file: '(the bytes of signed.pdf)' }] },
);

/** What a signing answer's `warnings` mean (issue 38), in the OpenAPI description. */
export const SIGNING_WARNINGS =
  'Present when something about the signature needs saying: the signing certificate’s revocation status could not be checked before signing (its OCSP responder or CRL unreachable), so the signature carries no proof of it and verifiers will answer INDETERMINATE until validation data is added (a revoked certificate never signs: 503 SEAL_CERTIFICATE_REVOKED); or a signature after another has visuals on pages other than its widget’s, which stay annotations of their own that strict validators (pyHanko’s default difference-analysis policy) refuse after a signature. Visuals on the widget’s page are drawn in the widget.';

const Outcome = Type.Object(
  {
    status: Type.Literal('SUCCESS'),
    levelAchieved: Type.String({ description: 'The PAdES level reached: B-B, B-T, B-LT or B-LTA.' }),
    fellBack: Type.Boolean({
      description: 'True when the TSA failed and the signature was made at a lower level.',
    }),
    reason: Type.Optional(Type.String({ description: 'Why it fell back.' })),
    warnings: Type.Optional(Type.Array(Type.String(), { description: SIGNING_WARNINGS })),
    shareStateName: Type.Union([Type.String(), Type.Null()], {
      description: 'The document’s state after the call (`completed` when this was the last signature).',
    }),
  },
  { examples: [SIGN_OUTCOME_EXAMPLE] },
);

const VerifyQuery = Type.Object(
  {
    dss: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Adds `dss` with `simpleReport`, `detailedReport`, `diagnosticData` and `validationReport` (ETSI TS 119 102-2) as XML strings.',
      }),
    ),
    evidence: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Adds each signature’s `evidence` (its CMS, validated chain, CMS certificates, CRLs and timestamp tokens) and the document’s `evidence.dss` (certificates, CRLs and OCSP responses of its security store), all base64 DER.',
      }),
    ),
  },
  { additionalProperties: false },
);

/** What the sign calls take and answer: the users' and, the same, the external recipients'. */
const SignCall = {
  params: Type.Object({ version: Version }),
  body: SignBody,
  response: withErrors({ 200: Outcome, 409: Type.Ref('ErrorBody') }),
};

const VERIFY_DESCRIPTION =
  'For each signature: signer, claimed time, byte range and coverage, digest and CMS checks, chain and trust, revocation, PAdES level, timestamps, ETSI indication. Bytes are never numbers: evidence is base64 (certificates as base64 DER) and only with `evidence=true`; without it the report stays small (under 8 KB for three signatures, about 1.5 KB each; with `evidence=true` about 11 KB each). Per signature `level` is the PAdES level the file proves, `certificate.revocationData` (and `timestamp.revocationData` for the signature timestamp’s TSA) the revocation answers found in the file and where (DSS or CMS), `documentTimestamps` the document timestamps covering it (each also an entry of its own). `dss=true` adds the ETSI XML reports.';

/**
 * DESIGN "Decided this round": what a recipient may draw, for every call they draw through (the sign
 * calls for their share, POST /share/execute, PUT /share/reject, POST /inbox/action).
 */
export const RECIPIENT_FIELDS_ONLY =
  'A recipient draws only in the fields assigned to them (their share’s `signatureFields`, as GET /share/document shows them), unless the share has the right `freePlacement`. An entry naming a field by `fieldId` takes the field’s `pages` and `position` (`position` may then be left out; given anyway, the field’s win); the field must be the recipient’s, one they fill in (not read-only, not imported, not `annotation_submitted_file`) and of the entry’s kind (`signature` entries: `signature` or `wacom` fields; `initials`: `initials`; `stamp`/`image` entries and `images`: `stamp` or `image` fields; `annotations`: `annotation` fields), and filled once per call: 400 VALIDATION_ERROR naming the entry and the id otherwise (`"annotations[0].fieldId" "fld_x" is not one of your fields`). An entry without `fieldId` fills the recipient’s field of its kind whose `pages` and `position` it repeats (within 0.001); any other is placed freely, which needs `freePlacement`: 403 FORBIDDEN naming the right. A recipient with no field of a mark’s kind (no `signature` field, or no `initials` field) may still place that mark of their own where they choose (the signer page places their signature for them), but nothing else. Checked before anything is drawn: on refusal nothing is written. With `freePlacement`, entries without `fieldId` go where they say.';

/** Signing, sealing, annotating and verifying. */
export function signingRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // PUT and POST are the same call (spec: POST keeps its original providers); each its own operation.
    const signOptions = (operationId: string) => ({
      schema: {
        tags: ['signing'],
        operationId,
        summary: 'Sign a document',
        description: `Each \`signatures\` entry is drawn as an annotation with its own appearance stream and the revision is closed by a PAdES signature made with the organisation key on behalf of the caller, as an incremental update (earlier signatures stay valid). The main file gets a new id. Signature and initials images come from POST /files/signature|initials (usable any number of times); \`images\` must be unused uploads or the document barcode. A recipient’s signature completes their share; the last completes the document (sealed when \`sealOnComplete\`). A user signing as the recipient of a sign share is confined to their fields: ${RECIPIENT_FIELDS_ONLY}`,
        ...SignCall,
      },
    });
    const signAsUser = (actor: Actor, body: Static<typeof SignBody>, version: number) =>
      signDocument(deps, { kind: 'user', actor }, { ...body, version });
    app.put('/documents/sign/:version', signOptions('signDocument'), async (request) =>
      signAsUser(actorOf(request), request.body, request.params.version),
    );
    app.post('/documents/sign/:version', signOptions('signDocumentWithPost'), async (request) =>
      signAsUser(actorOf(request), request.body, request.params.version),
    );

    app.put(
      '/share/document/sign/:version',
      {
        config: { auth: 'recipient' },
        schema: {
          tags: ['sharing'],
          operationId: 'signSharedDocument',
          summary: 'Sign as an external recipient',
          description: `With the share-link token; as PUT /documents/sign/:version. Images from POST /share/upload/signature|initials|file. ${RECIPIENT_FIELDS_ONLY}`,
          ...SignCall,
        },
      },
      async (request) => {
        if (!request.recipient) return signAsUser(actorOf(request), request.body, request.params.version);
        return signDocument(
          deps,
          { kind: 'share', recipient: request.recipient },
          { ...request.body, version: request.params.version },
        );
      },
    );

    app.put(
      '/documents/seal/:version',
      {
        schema: {
          tags: ['signing'],
          operationId: 'sealDocument',
          summary: 'Seal with the organisation certificate',
          description:
            "`certificate: true`; `signatureProvider` names the provider (`internal`, the organisation key, or `csc`, a remote signing service speaking the CSC API v2, when configured; by default the installation's SEAL_PROVIDER); `level` B-B, B-T, B-LT or B-LTA. A failing TSA falls back to a lower level and says so (`fellBack`); a timestamp is never faked.",
          params: Type.Object({ version: Version }),
          body: SealBody,
          response: withErrors({
            200: withExamples(Outcome, {
              status: 'SUCCESS',
              levelAchieved: 'B-LTA',
              fellBack: false,
              shareStateName: null,
            }),
            409: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request) =>
        sealDocument(deps, actorOf(request), { ...request.body, version: request.params.version }),
    );

    app.put(
      '/documents/annotate/:version',
      {
        schema: {
          tags: ['signing'],
          operationId: 'annotateDocument',
          summary: 'Annotate with images and text',
          description:
            '`images` (the document barcode with subtype `image_barcode`, or unused uploads) and text `annotations`, as annotations in one incremental update.',
          params: Type.Object({ version: Version }),
          body: AnnotateBody,
          response: withErrors({
            200: Type.Object({ status: Type.Literal('SUCCESS') }, { examples: [{ status: 'SUCCESS' }] }),
            409: Type.Ref('ErrorBody'),
          }),
        },
      },
      async (request) =>
        annotateDocument(deps, actorOf(request), { ...request.body, version: request.params.version }),
    );

    app.get(
      '/documents/:documentId/verify',
      {
        schema: {
          tags: ['signing'],
          operationId: 'verifyDocument',
          summary: 'Verify the signatures of a document',
          description: `${VERIFY_DESCRIPTION} A document the caller may not see is 404.`,
          params: Type.Object({ documentId: DocumentId }),
          querystring: VerifyQuery,
          response: withErrors({ 200: withExamples(VerificationReport, VERIFY_EXAMPLE) }),
        },
      },
      async (request) =>
        verifyDocument(deps, actorOf(request), {
          id: request.params.documentId,
          dss: request.query.dss === true,
          evidence: request.query.evidence === true,
        }),
    );

    app.post(
      '/verify',
      {
        schema: {
          tags: ['signing'],
          operationId: 'verifyPdf',
          summary: 'Verify an uploaded PDF',
          description: `multipart \`file\`; answers like GET /documents/{id}/verify. ${VERIFY_DESCRIPTION}`,
          consumes: ['multipart/form-data'],
          multipartBody: VerifyParts,
          querystring: VerifyQuery,
          response: withErrors({ 200: withExamples(VerificationReport, VERIFY_EXAMPLE) }),
        },
      },
      async (request) => {
        if (!request.actor) throw new Unauthenticated();
        const { result } = await readMultipart(request, async (part) => ({
          bytes: await buffer(part.file),
          name: part.filename,
        }));
        return verifyUpload(deps, {
          pdf: new Uint8Array(result.bytes),
          name: result.name,
          dss: request.query.dss === true,
          evidence: request.query.evidence === true,
        });
      },
    );
  };
}

import { buffer } from 'node:stream/consumers';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { ValidationError } from '../../core/errors.js';
import { addCertificate, deleteCertificate } from '../../users/certificates.js';
import {
  finishTwoStepDigest,
  finishTwoStepFile,
  startTwoStep,
  type TwoStepMode,
} from '../../signing/two-step/signing-session.js';
import { actorOf } from '../authentication.js';
import { DocumentId, Version } from '../document-schemas.js';
import { readMultipart } from '../multipart.js';
import { Id, IdParams, Success, withErrors } from '../schemas.js';
import { ImageEntrySchema, SignatureEntrySchema, TextEntrySchema } from './signing.js';
import { answerSuccess } from '../answers.js';

const CertificateHash = Type.String({
  pattern: '^[0-9A-Fa-f]{64}$',
  description: 'SHA-256 (hex) of the certificate’s DER, as listed in the user’s `certificates`.',
});

const CertificateView = Type.Object({
  id: Type.String({ description: 'Lowercase hex SHA-256 of the DER: the `certificateHash`.' }),
  subject: Type.String(),
  issuer: Type.String(),
  serialNumber: Type.String(),
  keyAlgorithm: Type.Enum(['RSA', 'ECDSA']),
  notBefore: Type.String(),
  notAfter: Type.String(),
  chainLength: Type.Integer(),
  createdAt: Type.String(),
});

const StartBody = Type.Object(
  {
    id: DocumentId,
    certificateHash: CertificateHash,
    signatureProvider: Type.Enum(['internalUsb', 'internalNfc'], {
      description: 'Two-step providers only; POST /documents/sign/{version} keeps the original providers.',
    }),
    digestAlgorithm: Type.Optional(Type.Enum(['SHA-256', 'SHA-384', 'SHA-512'], { default: 'SHA-256' })),
    signatures: Type.Optional(Type.Array(SignatureEntrySchema, { maxItems: 200 })),
    images: Type.Optional(Type.Array(ImageEntrySchema, { maxItems: 200 })),
    annotations: Type.Optional(Type.Array(TextEntrySchema, { maxItems: 200 })),
  },
  { additionalProperties: false },
);

const StartAnswer = Type.Object({
  files: Type.Array(Type.Object({ digest: Type.String(), preparedFile: Type.String() })),
  sessionId: Type.String(),
  sessionExpiration: Type.String({ format: 'date-time' }),
});

const FinishAnswer = Type.Object({
  status: Type.Literal('ok'),
  documentId: Type.String(),
  _version: Type.Integer(),
  levelAchieved: Type.Enum(['B-B', 'B-T']),
  fellBack: Type.Boolean(),
  shareStateName: Type.Union([Type.String(), Type.Null()]),
});

const SessionId = Type.String({ minLength: 1, maxLength: 100 });

/** Personal certificates and two-step signing with hardware keys (spec: Two-step signing session). */
export function twoStepRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/users/:id/certificate',
      {
        schema: {
          tags: ['users'],
          summary: 'Add a personal certificate for two-step signing',
          description:
            'multipart `file`: PEM (one or more blocks, the user’s certificate first, then its issuers) or DER (one certificate, or several one after another). Only certificates are stored, never keys. A user adds their own; administrators add them for users they manage. The answer’s `id` (lowercase hex SHA-256 of the DER) is the `certificateHash` of two-step signing.',
          consumes: ['multipart/form-data'],
          params: IdParams,
          response: withErrors({ 200: CertificateView, 409: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => {
        const actor = actorOf(request);
        const { result } = await readMultipart(request, async (part) => buffer(part.file));
        return addCertificate(deps, actor, request.params.id, new Uint8Array(result));
      },
    );

    app.delete(
      '/users/:id/certificate/:certificate',
      {
        schema: {
          tags: ['users'],
          summary: 'Delete a personal certificate',
          description:
            '`certificate` is its hash. Open two-step sessions started with it can no longer finish.',
          params: Type.Object({ id: Id, certificate: CertificateHash }),
          response: withErrors({ 200: Success }),
        },
      },
      async (request) =>
        answerSuccess(
          deleteCertificate(deps, actorOf(request), request.params.id, request.params.certificate),
        ),
    );

    const start = (mode: TwoStepMode, summary: string, description: string) =>
      ({
        schema: {
          tags: ['signing'],
          summary,
          description,
          params: Type.Object({ version: Version }),
          body: StartBody,
          response: withErrors({ 200: StartAnswer, 409: Type.Ref('ErrorBody') }),
        },
      }) as const;

    app.post(
      '/documents/sign/:version/start/digest',
      start(
        'digest',
        'Start two-step signing: digest to sign',
        'Places the `signatures` visuals and prepares the PDF with the certificate named by `certificateHash`, in one revision. `files[0].digest` is base64 of the `digestAlgorithm` hash of the DER CMS signed attributes: the hardware token signs it (RSA PKCS#1 v1.5 or ECDSA) and the client calls PUT /documents/sign/finish/digest before `sessionExpiration`. `preparedFile` is the prepared PDF’s file id (GET /files/loadFile/hash/{id}).',
      ),
      async (request) =>
        startTwoStep(deps, actorOf(request), 'digest', { ...request.body, version: request.params.version }),
    );

    app.post(
      '/documents/sign/:version/start/file',
      start(
        'file',
        'Start two-step signing: whole prepared file',
        'As /start/digest, but the client signs the prepared file entirely: download `preparedFile`, put a CMS (SubFilter ETSI.CAdES.detached) over its /ByteRange into /Contents, and send it to PUT /documents/sign/finish/file. `files[0].digest` is base64 of the `digestAlgorithm` hash of the signed byte ranges (the CMS message digest).',
      ),
      async (request) =>
        startTwoStep(deps, actorOf(request), 'file', { ...request.body, version: request.params.version }),
    );

    app.put(
      '/documents/sign/finish/digest',
      {
        schema: {
          tags: ['signing'],
          summary: 'Finish two-step signing with the signed digest',
          description:
            '`signedDigests[].signedDigest` is the base64 raw signature (RSA PKCS#1 v1.5, or ECDSA as DER or r||s) over the digest given as `originalDigest`. It is checked against the certificate before it is embedded; the document’s main file becomes the signed file (PAdES B-T when TSA_URL is set). 404 for an unknown session, 410 SESSION_EXPIRED after `sessionExpiration`, 409 SESSION_FINISHED when already finished, 409 VERSION_MISMATCH when the document changed since the start.',
          body: Type.Object(
            {
              sessionId: SessionId,
              signedDigests: Type.Array(
                Type.Object(
                  {
                    originalDigest: Type.String({ minLength: 1, maxLength: 200 }),
                    signedDigest: Type.String({ minLength: 1, maxLength: 4000 }),
                  },
                  { additionalProperties: false },
                ),
                { minItems: 1, maxItems: 10 },
              ),
            },
            { additionalProperties: false },
          ),
          response: withErrors({ 200: FinishAnswer, 409: Type.Ref('ErrorBody'), 410: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => finishTwoStepDigest(deps, actorOf(request), request.body),
    );

    app.put(
      '/documents/sign/finish/file',
      {
        schema: {
          tags: ['signing'],
          summary: 'Finish two-step signing with the signed file',
          description:
            'multipart `sessionId` + `file`: the prepared file with its signature filled in. Accepted only when nothing but the signature’s /Contents differs from the prepared file and the CMS verifies with the session’s certificate. Errors as for /finish/digest.',
          consumes: ['multipart/form-data'],
          response: withErrors({ 200: FinishAnswer, 409: Type.Ref('ErrorBody'), 410: Type.Ref('ErrorBody') }),
        },
      },
      async (request) => {
        const actor = actorOf(request);
        const { result, fields } = await readMultipart(request, async (part) => buffer(part.file));
        const sessionId = fields.sessionId;
        if (!sessionId) throw new ValidationError('sessionId', 'is required');
        return finishTwoStepFile(deps, actor, { sessionId, file: new Uint8Array(result) });
      },
    );
  };
}

import { buffer } from 'node:stream/consumers';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { ValidationError } from '../../base/errors.js';
import { addCertificate, deleteCertificate } from '../../users/certificates.js';
import {
  finishTwoStepDigest,
  finishTwoStepFile,
  startTwoStep,
} from '../../signing/two-step/signing-session.js';
import { actorOf } from '../authentication.js';
import { Version } from '../../core/documents/document-contract.js';
import { readMultipart } from '../multipart.js';
import { IdParams, Success, withErrors } from '../schemas.js';
import { Id } from '../../core/common-contract.js';
import { EXAMPLE_IDS } from '../../core/examples.js';
import { answerSuccess } from '../answers.js';
import { CERTIFICATE_HASH, CertificateHash, FinishDigestBody, StartBody } from '../../signing/contract.js';

const CertificateView = Type.Object(
  {
    id: Type.String({ description: 'Lowercase hex SHA-256 of the DER: the `certificateHash`.' }),
    subject: Type.String(),
    issuer: Type.String(),
    serialNumber: Type.String(),
    keyAlgorithm: Type.Enum(['RSA', 'ECDSA']),
    notBefore: Type.String(),
    notAfter: Type.String(),
    chainLength: Type.Integer(),
    createdAt: Type.String(),
  },
  {
    examples: [
      {
        id: CERTIFICATE_HASH,
        subject: 'CN=Ivy Signer, O=Example Ltd, C=DE',
        issuer: 'CN=Example Qualified CA, O=Example Trust, C=DE',
        serialNumber: '4f2a9c61d3b8e705',
        keyAlgorithm: 'RSA',
        notBefore: '2025-06-01T00:00:00.000Z',
        notAfter: '2028-05-31T23:59:59.000Z',
        chainLength: 2,
        createdAt: '2026-03-01T08:00:00.000Z',
      },
    ],
  },
);

const CertificateParts = Type.Object(
  { file: Type.String({ format: 'binary', description: 'PEM or DER: the certificate, then its issuers.' }) },
  { examples: [{ file: '(the bytes of ivy.pem)' }] },
);

const StartAnswer = Type.Object(
  {
    files: Type.Array(Type.Object({ digest: Type.String(), preparedFile: Type.String() })),
    sessionId: Type.String(),
    sessionExpiration: Type.String({ format: 'date-time' }),
    warnings: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'When the certificate names an OCSP responder or a CRL that could not be asked before preparing: why (the signature then carries no proof of its status and verifies INDETERMINATE until one is added, B-LT); and, as in one step, visuals of a signature after another on pages other than its widget’s (see PUT /documents/sign’s `warnings`).',
      }),
    ),
  },
  {
    examples: [
      {
        files: [
          {
            digest: 'q1MKE+RZFJgrefm34/uplM/R8/si9xzqGvvwK0YMbR0=',
            preparedFile: '7c0e2b9d4f6a8c1e3b5d7f9a0c2e4b6d',
          },
        ],
        sessionId: 'tss_Jr6Qm2vXk9PzLw4Ty8Nc1Hb5Ds3Fa7Ge',
        sessionExpiration: '2026-03-01T08:15:00.000Z',
      },
    ],
  },
);

const FinishAnswer = Type.Object(
  {
    status: Type.Literal('ok'),
    documentId: Type.String(),
    _version: Type.Integer(),
    levelAchieved: Type.Enum(['B-B', 'B-T']),
    fellBack: Type.Boolean(),
    shareStateName: Type.Union([Type.String(), Type.Null()]),
  },
  {
    examples: [
      {
        status: 'ok',
        documentId: EXAMPLE_IDS.documentId,
        _version: 3,
        levelAchieved: 'B-T',
        fellBack: false,
        shareStateName: null,
      },
    ],
  },
);

const FinishFileParts = Type.Object(
  {
    sessionId: Type.String({ description: 'The session /start/file answered.' }),
    file: Type.String({ format: 'binary', description: 'The prepared PDF with its signature in /Contents.' }),
  },
  {
    examples: [{ sessionId: 'tss_Jr6Qm2vXk9PzLw4Ty8Nc1Hb5Ds3Fa7Ge', file: '(the bytes of the signed PDF)' }],
  },
);

/** Personal certificates and two-step signing with hardware keys. */
export function twoStepRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/users/:id/certificate',
      {
        schema: {
          tags: ['users'],
          operationId: 'addUserCertificate',
          summary: 'Add a personal certificate for two-step signing',
          description:
            'multipart `file`: PEM (one or more blocks, the user’s certificate first, then its issuers) or DER (one certificate, or several one after another). Only certificates are stored, never keys. A user adds their own; administrators add them for users they manage. The answer’s `id` (lowercase hex SHA-256 of the DER) is the `certificateHash` of two-step signing.',
          consumes: ['multipart/form-data'],
          multipartBody: CertificateParts,
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
          operationId: 'deleteUserCertificate',
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

    const start = (operationId: string, summary: string, description: string) =>
      ({
        schema: {
          tags: ['signing'],
          operationId,
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
        'startDigestSigning',
        'Start two-step signing: digest to sign',
        'Places the `signatures` visuals and prepares the PDF with the certificate named by `certificateHash`, in one revision. `files[0].digest` is base64 of the `digestAlgorithm` hash of the DER CMS signed attributes: the hardware token signs it (RSA PKCS#1 v1.5 or ECDSA) and the client calls PUT /documents/sign/finish/digest before `sessionExpiration`. `preparedFile` is the prepared PDF’s file id (GET /files/loadFile/hash/{id}). Before anything is prepared, the certificate’s revocation status is asked of the OCSP responder or CRL it names: a revoked certificate answers 400 on `certificateHash`; the answers proving it good are signed with it (adbe-revocationInfoArchival); one that could not be had is said in `warnings`.',
      ),
      async (request) =>
        startTwoStep(deps, actorOf(request), 'digest', { ...request.body, version: request.params.version }),
    );

    app.post(
      '/documents/sign/:version/start/file',
      start(
        'startFileSigning',
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
          operationId: 'finishDigestSigning',
          summary: 'Finish two-step signing with the signed digest',
          description:
            '`signedDigests[].signedDigest` is the base64 raw signature (RSA PKCS#1 v1.5, or ECDSA as DER or r||s) over the digest given as `originalDigest`. It is checked against the certificate before it is embedded; the document’s main file becomes the signed file (PAdES B-T when TSA_URL is set). 404 for an unknown session, 410 SESSION_EXPIRED after `sessionExpiration`, 409 SESSION_FINISHED when already finished, 409 VERSION_MISMATCH when the document changed since the start.',
          body: FinishDigestBody,
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
          operationId: 'finishFileSigning',
          summary: 'Finish two-step signing with the signed file',
          description:
            'multipart `sessionId` + `file`: the prepared file with its signature filled in. Accepted only when nothing but the signature’s /Contents differs from the prepared file and the CMS verifies with the session’s certificate. Errors as for /finish/digest.',
          consumes: ['multipart/form-data'],
          multipartBody: FinishFileParts,
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

import { Type } from 'typebox';
import { DocumentId } from '../core/documents/document-contract.js';
import { EXAMPLE_IDS, POSITION_EXAMPLE } from '../core/examples.js';
import {
  ImageEntrySchema,
  Level,
  SignatureEntrySchema,
  TextEntrySchema,
} from '../core/documents/visual-contract.js';

/**
 * What the signing calls take: the schemas the routes check requests against (with their OpenAPI
 * descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

/** The body of PUT /documents/seal/{version}: the organisation’s seal, by which provider, at which level. */
export const SealBody = Type.Object(
  {
    id: DocumentId,
    certificate: Type.Literal(true),
    signatureProvider: Type.Optional(
      Type.String({
        maxLength: 50,
        description:
          '`internal` (the organisation key) or, when configured, `csc` (CSC API v2); by default SEAL_PROVIDER. Any other name is 400.',
      }),
    ),
    level: Level,
  },
  {
    additionalProperties: false,
    examples: [{ id: EXAMPLE_IDS.documentId, certificate: true, level: 'B-LTA' }],
  },
);

/** The body of PUT /documents/annotate/{version}: images and text drawn without a signature. */
export const AnnotateBody = Type.Object(
  {
    id: DocumentId,
    images: Type.Optional(Type.Array(ImageEntrySchema, { maxItems: 200 })),
    annotations: Type.Optional(Type.Array(TextEntrySchema, { maxItems: 200 })),
  },
  {
    additionalProperties: false,
    examples: [
      {
        id: EXAMPLE_IDS.documentId,
        images: [
          {
            blob: EXAMPLE_IDS.barcode,
            subtype: 'image_barcode',
            pages: [1],
            position: { percentX: 0.85, percentY: 0.02, percentWidth: 0.12, percentHeight: 0.09 },
          },
        ],
        annotations: [
          {
            text: 'Ref. {{{documentId}}}',
            pages: [1],
            position: { percentX: 0.05, percentY: 0.95, percentWidth: 0.5, percentHeight: 0.03 },
            fontSize: 9,
          },
        ],
      },
    ],
  },
);

export const CERTIFICATE_HASH = '6861391b2941ea975e227b2b888c943271065410ae310a5592be292715c433f3';

export const CertificateHash = Type.String({
  pattern: '^[0-9A-Fa-f]{64}$',
  description: 'SHA-256 (hex) of the certificate’s DER, as listed in the user’s `certificates`.',
});

/**
 * The body of POST /documents/sign/{version}/start/digest and …/start/file: the document, the certificate,
 * the provider and what is drawn.
 */
export const StartBody = Type.Object(
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
  {
    additionalProperties: false,
    examples: [
      {
        id: EXAMPLE_IDS.documentId,
        certificateHash: CERTIFICATE_HASH,
        signatureProvider: 'internalUsb',
        digestAlgorithm: 'SHA-256',
        signatures: [
          { type: 'signature', blob: EXAMPLE_IDS.imageId, pages: [1], position: POSITION_EXAMPLE },
        ],
      },
    ],
  },
);

const SessionId = Type.String({ minLength: 1, maxLength: 100 });

/** The body of PUT /documents/sign/finish/digest: the session and the signed digests. */
export const FinishDigestBody = Type.Object(
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
  {
    additionalProperties: false,
    examples: [
      {
        sessionId: 'tss_Jr6Qm2vXk9PzLw4Ty8Nc1Hb5Ds3Fa7Ge',
        signedDigests: [
          {
            originalDigest: 'q1MKE+RZFJgrefm34/uplM/R8/si9xzqGvvwK0YMbR0=',
            signedDigest:
              'MEUCIQDx3Yk8w9+2b0q4H1v6l2Zr8n5d0c3A7s9k2P4t1xJmQwIgX5r0d8s2K6v1n9c4b7q3Z0y5w8t2m6p1k4j7h3g9f0E=',
          },
        ],
      },
    ],
  },
);

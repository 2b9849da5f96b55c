import { Type, type Static } from 'typebox';
import type { DocumentSecurityStore } from '../pdf/find-signatures.js';
import { documentVerdict } from '../pdf/verdict.js';
import type { PdfVerification, SignatureCheck } from '../pdf/verify-pdf.js';
import type { TrailCheck } from '../core/audit/embedded-trail.js';
import { AuditTrailReport } from './trail-report.js';

/**
 * The answer of GET /documents/:id/verify and POST /verify. Contract: "Verification reports carry
 * bytes as base64 (certificates as base64 DER), never as arrays or objects of numbers." The bulky
 * evidence (the CMS, certificates, revocation data) is opt-in with `evidence=true`; the default report
 * holds the checks and what a person reads (names, times, indications, the revocation answers found):
 * about 1.3 KB per signature (measured: 4 KB for three seals, against 245 KB when the bytes were
 * dumped as numbers).
 */
const Base64 = (description: string) => Type.String({ format: 'byte', description });
const Base64List = (description: string) => Type.Array(Type.String({ format: 'byte' }), { description });

const RevocationFound = Type.Object(
  {
    certificate: Type.String({ description: 'Subject of the certificate the answer is about.' }),
    status: Type.Enum(['good', 'revoked', 'unknown']),
    source: Type.Enum(['crl', 'ocsp']),
    foundIn: Type.Enum(['dss', 'cms', 'online'], {
      description:
        'Where the answer is: in the file’s document security store, in the signature’s CMS (its CRLs or the signed revocation archive), or `online`: not in the file, fetched from the responder or CRL the certificate names when verifying (only where the installation allows it: VERIFY_FETCH_REVOCATION). An online answer decides the indication but proves no PAdES level.',
    }),
    issuedAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'thisUpdate of the CRL, producedAt of the OCSP response.',
      }),
    ),
  },
  { additionalProperties: false },
);
const RevocationData = Type.Array(RevocationFound, {
  description:
    'Per certificate of the chain below its trust anchor that has one, the revocation answer used: from the file, or fetched when verifying where the installation allows it (`foundIn: online`).',
});

const Timestamp = Type.Object(
  {
    genTime: Type.String({ format: 'date-time', description: 'The time the TSA vouches for.' }),
    valid: Type.Boolean({ description: 'The token’s own signature verifies.' }),
    coversData: Type.Boolean({
      description: 'The token covers what it should: the signature value, or the document’s byte ranges.',
    }),
    tsa: Type.Optional(Type.String({ description: 'Common name of the TSA certificate.' })),
    revocation: Type.Optional(
      Type.Enum(['good', 'revoked', 'unknown'], {
        description:
          'A signature timestamp’s: revocation of the TSA’s chain from the data in the file; `good` only when every certificate below its root has a good answer (a B-LT needs it).',
      }),
    ),
    revocationData: Type.Optional(RevocationData),
    problems: Type.Array(Type.String()),
  },
  { additionalProperties: false },
);

const Modification = Type.Object(
  {
    revision: Type.Integer({ minimum: 1, description: '1 = the first revision after the signature’s own.' }),
    kind: Type.Enum(['validation-data', 'signature', 'form-filling', 'annotation', 'other'], {
      description:
        'validation-data: DSS, VRI, document timestamps; signature: a later signature with its field, widget and appearance; form-filling: values of existing fields; annotation: an annotation added or changed; other: anything else (page content, resources, page tree, catalog entries, deleted objects).',
    }),
    objects: Type.Array(Type.Integer(), { description: 'The object numbers written or freed.' }),
    pages: Type.Array(Type.Integer(), { description: '1-based pages concerned.' }),
    coversSignedContent: Type.Optional(
      Type.Boolean({
        description: 'An annotation over text or graphics of the signed page (true when unsure).',
      }),
    ),
    rect: Type.Optional(Type.Array(Type.Number(), { description: 'The annotation’s rectangle.' })),
    description: Type.String({ description: 'The change in one sentence.' }),
  },
  { additionalProperties: false },
);

const SignatureEvidence = Type.Object(
  {
    cms: Base64('The signature’s CMS (the /Contents string without its padding), DER.'),
    certificates: Base64List('The validated chain, signer first, each as base64 DER.'),
    cmsCertificates: Base64List('The certificates the CMS carries, as found (base64 DER).'),
    crls: Base64List('The CRLs the CMS carries (base64 DER).'),
    timestampTokens: Base64List(
      'The signature-time-stamp tokens among the unsigned attributes (base64 DER).',
    ),
    signedAttributes: Type.Optional(
      Base64('The DER SET of signed attributes that the signature value covers.'),
    ),
    messageDigest: Type.Optional(Base64('The message-digest signed attribute.')),
    signatureValue: Type.Optional(Base64('The signature value.')),
  },
  {
    additionalProperties: false,
    description:
      'Only with `evidence=true`: the material the checks were made on, for archiving or re-validation.',
  },
);

const Signature = Type.Object(
  {
    fieldName: Type.String(),
    kind: Type.Enum(['signature', 'document-timestamp']),
    subFilter: Type.String({ description: 'e.g. `ETSI.CAdES.detached`, `ETSI.RFC3161`.' }),
    signerName: Type.Optional(Type.String({ description: '/Name of the signature dictionary.' })),
    signer: Type.Optional(
      Type.Object(
        {
          commonName: Type.String(),
          subjectText: Type.String(),
          issuerText: Type.String(),
          notBefore: Type.String({ format: 'date-time' }),
          notAfter: Type.String({ format: 'date-time' }),
          sha256: Type.String({ description: 'Lowercase hex SHA-256 of the signer certificate’s DER.' }),
        },
        { additionalProperties: false },
      ),
    ),
    claimedSigningTime: Type.Optional(
      Type.String({ format: 'date-time', description: '/M, the claimed time.' }),
    ),
    reason: Type.Optional(Type.String()),
    location: Type.Optional(Type.String()),
    byteRange: Type.Array(Type.Integer(), {
      description: 'The four /ByteRange numbers (offsets, not bytes).',
    }),
    byteRangeValid: Type.Boolean({ description: 'Starts at 0 and leaves out exactly the /Contents string.' }),
    coversWholeFile: Type.Boolean(),
    revisionsAfter: Type.Integer({
      description: 'Incremental updates appended after this signature’s revision.',
    }),
    digestValid: Type.Boolean({ description: 'message-digest equals the digest of the signed byte ranges.' }),
    signatureValid: Type.Boolean({
      description: 'The CMS signature value verifies with the signer’s certificate.',
    }),
    certificate: Type.Object(
      {
        trusted: Type.Boolean({ description: 'The chain reaches one of the organisation’s trust anchors.' }),
        chain: Type.Array(Type.String(), { description: 'Subjects of the chain, signer first.' }),
        revocation: Type.Enum(['good', 'revoked', 'unknown']),
        revocationSources: Type.Array(Type.Enum(['crl', 'ocsp'])),
        revocationData: RevocationData,
        problems: Type.Array(Type.String()),
      },
      { additionalProperties: false },
    ),
    timestamp: Type.Optional(Timestamp),
    level: Type.Optional(
      Type.Enum(['B-B', 'B-T', 'B-LT', 'B-LTA'], {
        description:
          'PAdES baseline level the file proves for this signature: B-T needs a valid signature timestamp or a later document timestamp, B-LT a DSS with its chain and revocation data (and the signature timestamp’s TSA’s), B-LTA a document timestamp over a revision that already had them. Absent for document timestamps and signatures that are not PAdES or failed.',
      }),
    ),
    documentTimestamps: Type.Array(
      Type.Object(
        {
          fieldName: Type.String(),
          genTime: Type.String({ format: 'date-time' }),
        },
        { additionalProperties: false },
      ),
      {
        description:
          'The document timestamps (each also an entry of its own, `kind` `document-timestamp`) added after this signature’s revision, so covering it, that did not fail; oldest first.',
      },
    ),
    indication: Type.Enum(['TOTAL_PASSED', 'TOTAL_FAILED', 'INDETERMINATE'], {
      description: 'ETSI TS 119 102-1 main indication.',
    }),
    modifications: Type.Array(Modification, {
      description:
        'What every revision after this signature changed, object by object against the revision before it (difference analysis).',
    }),
    verdict: Type.Enum(['valid', 'changed', 'invalid', 'indeterminate'], {
      description:
        'invalid: its byte range, digest, value or /Contents padding fail (or TOTAL_FAILED); changed: a later revision went beyond what is allowed after a signature (validation data, later signatures, form filling, annotations covering no signed content); indeterminate: the signer is not confirmed; valid otherwise.',
    }),
    subIndication: Type.Optional(Type.String()),
    problems: Type.Array(Type.String()),
    warnings: Type.Array(Type.String()),
    evidence: Type.Optional(SignatureEvidence),
  },
  { additionalProperties: false },
);

export const VerificationReport = Type.Object(
  {
    verdict: Type.Object(
      {
        headline: Type.Enum(['valid', 'changed', 'invalid', 'unconfirmed', 'unsigned'], {
          description:
            'The one headline (docs/signing-and-verification.md, "Verification headlines"): unsigned, invalid (a signature broken or the audit trail not checking out), changed (a revision after a signature went beyond what is allowed), unconfirmed (a signer not confirmed), valid.',
        }),
        signature: Type.Optional(
          Type.String({
            description:
              'fieldName of the first broken signature (invalid) or of the first whose covered content a later revision altered (changed).',
          }),
        ),
        reason: Type.String({ description: 'Why, in one sentence.' }),
      },
      { additionalProperties: false },
    ),
    signatures: Type.Array(Signature),
    validationTime: Type.String({ format: 'date-time' }),
    auditTrail: Type.Optional(AuditTrailReport),
    evidence: Type.Optional(
      Type.Object(
        {
          dss: Type.Object(
            {
              certificates: Base64List('Certificates of the document security store (base64 DER).'),
              crls: Base64List('CRLs of the document security store (base64 DER).'),
              ocsps: Base64List('OCSP responses of the document security store (base64 DER).'),
            },
            { additionalProperties: false },
          ),
        },
        {
          additionalProperties: false,
          description:
            'Only with `evidence=true`: the document’s revocation data (empty lists without a DSS).',
        },
      ),
    ),
    dss: Type.Optional(
      Type.Object(
        {
          simpleReport: Type.String(),
          detailedReport: Type.String(),
          diagnosticData: Type.String(),
          validationReport: Type.String(),
        },
        {
          additionalProperties: false,
          description: 'Only with `dss=true`: the ETSI TS 119 102-2 reports as XML strings.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type VerificationReport = Static<typeof VerificationReport>;

const b64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64');

/** Shapes a verification for the API: no raw bytes; evidence as base64 only when asked for. */
export function verificationReport(
  verification: PdfVerification,
  options: { evidence: boolean },
  auditTrail?: TrailCheck,
): VerificationReport {
  return {
    verdict: documentVerdict(verification, auditTrail),
    signatures: verification.signatures.map((check) => signatureReport(check, options.evidence)),
    validationTime: verification.validationTime,
    ...(auditTrail?.present ? { auditTrail } : {}),
    ...(options.evidence ? { evidence: { dss: dssEvidence(verification.securityStore) } } : {}),
    ...(verification.dss ? { dss: verification.dss } : {}),
  };
}

function signatureReport(check: SignatureCheck, evidence: boolean): VerificationReport['signatures'][number] {
  const { evidence: material, signer, ...rest } = check;
  const cms = material.cms;
  return {
    ...rest,
    ...(signer
      ? {
          signer: {
            commonName: signer.commonName,
            subjectText: signer.subjectText,
            issuerText: signer.issuerText,
            notBefore: signer.notBefore.toISOString(),
            notAfter: signer.notAfter.toISOString(),
            sha256: signer.sha256,
          },
        }
      : {}),
    ...(evidence
      ? {
          evidence: {
            cms: b64(material.contents),
            certificates: material.chain.map(b64),
            cmsCertificates: (cms?.certificates ?? []).map(b64),
            crls: (cms?.crls ?? []).map(b64),
            timestampTokens: (cms?.timestampTokens ?? []).map(b64),
            ...(cms?.signedAttributes ? { signedAttributes: b64(cms.signedAttributes) } : {}),
            ...(cms?.messageDigest ? { messageDigest: b64(cms.messageDigest) } : {}),
            ...(cms ? { signatureValue: b64(cms.signatureValue) } : {}),
          },
        }
      : {}),
  };
}

function dssEvidence(store: DocumentSecurityStore | undefined) {
  return {
    certificates: (store?.certificates ?? []).map(b64),
    crls: (store?.crls ?? []).map(b64),
    ocsps: (store?.ocsps ?? []).map(b64),
  };
}

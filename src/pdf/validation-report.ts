import { digest } from '../pki/algorithms.js';
import { certificateFields } from '../pki/certificate-fields.js';
import { bytesEqual } from '../pki/der.js';
import type { DocumentSecurityStore } from './find-signatures.js';
import type { RevocationEvidence, SignatureCheck } from './verify-pdf.js';

/** spec: Versioning 4, the `dss` object of verify resources: four XML documents as strings. */
export interface ValidationReports {
  simpleReport: string;
  detailedReport: string;
  diagnosticData: string;
  validationReport: string;
}

const NS = {
  etsi: 'http://uri.etsi.org/19102/v1.2.1#',
  ds: 'http://www.w3.org/2000/09/xmldsig#',
  simple: 'http://dss.esig.europa.eu/validation/simple-report',
  detailed: 'http://dss.esig.europa.eu/validation/detailed-report',
  diagnostic: 'http://dss.esig.europa.eu/validation/diagnostic',
};

const SHA256_URI = 'http://www.w3.org/2001/04/xmlenc#sha256';
const POLICY = 'Signery basic validation policy';

/**
 * Renders verification results as XML. `validationReport` follows ETSI TS 119 102-2 (v1.2.1): per
 * signature SignatureIdentifier, ValidationTimeInfo, SignatureAttributes (claimed signing time,
 * timestamps), SignerInformation, SignatureValidationProcess, SignatureValidationStatus with ETSI main
 * and sub-indication URIs, and the certificates as SignatureValidationObjects. The other three follow
 * the shape of the EU DSS library's simple report, detailed report (one constraint per check) and
 * diagnostic data, as a well-formed subset of their elements.
 *
 * ```ts
 * const { validationReport } = validationReports({ checks, validationTime: new Date(), documentName: 'contract.pdf' });
 * ```
 */
export function validationReports(options: {
  checks: SignatureCheck[];
  validationTime: Date;
  documentName: string;
  /** The document's security store, when it has one. */
  dss?: DocumentSecurityStore;
}): ValidationReports {
  const ids = options.checks.map(
    (check, i) => `S-${i + 1}-${hex(digest('SHA-256', check.evidence.contents)).slice(0, 16)}`,
  );
  const certificates = new Map<string, Uint8Array>();
  for (const check of options.checks) {
    for (const der of check.evidence.chain) certificates.set(certificateId(der), der);
  }
  const context = { ...options, ids, certificates };
  return {
    simpleReport: simpleReport(context),
    detailedReport: detailedReport(context),
    diagnosticData: diagnosticData(context),
    validationReport: etsiReport(context),
  };
}

interface Context {
  checks: SignatureCheck[];
  validationTime: Date;
  documentName: string;
  dss?: DocumentSecurityStore;
  ids: string[];
  certificates: Map<string, Uint8Array>;
}

function etsiReport(context: Context): string {
  const objects = validationObjects(context);
  const reports = context.checks.map((check, i) => {
    const signatureTimestamp =
      check.kind === 'signature' && check.evidence.timestampToken
        ? objects.id('timestamp', check.evidence.timestampToken)
        : undefined;
    const documentTimestamps = check.documentTimestamps.flatMap((ts) => {
      const covering = context.checks.find((c) => c.fieldName === ts.fieldName);
      return covering ? [{ ...ts, id: objects.id('timestamp', covering.evidence.contents) }] : [];
    });
    const revocation = [...check.evidence.revocation, ...check.evidence.timestampRevocation].map((r) => ({
      ...r,
      id: objects.id(revocationType(r), r.der),
    }));
    const chainIds = check.evidence.chain.map((der) => objects.id('certificate', der));
    const trustAnchor = check.certificate.trusted ? chainIds[chainIds.length - 1] : undefined;
    const inDss = (ids: string[]) => ids.filter((id) => objects.inDss(id));
    const dssObjects = {
      certs: inDss(chainIds),
      crls: inDss(revocation.filter((r) => r.source === 'crl').map((r) => r.id)),
      ocsps: inDss(revocation.filter((r) => r.source === 'ocsp').map((r) => r.id)),
    };
    const refs = (name: string, ids: string[]): Xml | string =>
      ids.length ? el(name, { VOReference: unique(ids).join(' ') }) : '';

    // TS 119 102-2 SignatureAttributes, in the schema's order.
    const attributes: (Xml | string)[] = [];
    if (check.claimedSigningTime) {
      // /M is outside the CMS: the claimed time is not a signed attribute.
      attributes.push(el('vr:SigningTime', { Signed: 'false' }, el('vr:Time', {}, check.claimedSigningTime)));
    }
    if (check.timestamp && check.kind === 'signature') {
      attributes.push(
        el(
          'vr:SignatureTimeStamp',
          { Signed: 'false' },
          signatureTimestamp ? el('vr:AttributeObject', { VOReference: signatureTimestamp }) : '',
          el('vr:TimeStampValue', {}, check.timestamp.genTime),
        ),
      );
    }
    const inCms = revocation.filter((r) => r.foundIn === 'cms').map((r) => r.id);
    if (inCms.length) {
      attributes.push(
        el(
          'vr:RevocationValues',
          { Signed: 'false' },
          el('vr:AttributeObject', { VOReference: unique(inCms).join(' ') }),
        ),
      );
    }
    if (dssObjects.certs.length || dssObjects.crls.length || dssObjects.ocsps.length) {
      attributes.push(
        el(
          'vr:DSS',
          { Signed: 'false' },
          refs('vr:Certs', dssObjects.certs),
          refs('vr:CRLs', dssObjects.crls),
          refs('vr:OCSPs', dssObjects.ocsps),
        ),
      );
    }
    for (const ts of documentTimestamps) {
      attributes.push(
        el(
          'vr:DocTimeStamp',
          { Signed: 'false' },
          el('vr:AttributeObject', { VOReference: ts.id }),
          el('vr:TimeStampValue', {}, ts.genTime),
        ),
      );
    }
    // The signature dictionary's entries lie inside the signed byte ranges.
    if (check.reason)
      attributes.push(el('vr:Reason', { Signed: 'true' }, el('vr:ReasonElement', {}, check.reason)));
    if (check.signerName)
      attributes.push(el('vr:Name', { Signed: 'true' }, el('vr:NameElement', {}, check.signerName)));
    attributes.push(el('vr:SubFilter', { Signed: 'true' }, el('vr:SubFilterElement', {}, check.subFilter)));
    if (check.byteRange.length) attributes.push(el('vr:ByteRange', {}, check.byteRange.join(' ')));

    const signer = check.evidence.chain[0];
    const best = bestSignatureTime(
      check,
      signatureTimestamp,
      documentTimestamps,
      context.validationTime,
      check.kind === 'document-timestamp' ? objects.id('timestamp', check.evidence.contents) : undefined,
    );
    return el(
      'vr:SignatureValidationReport',
      {},
      el(
        'vr:SignatureIdentifier',
        { id: context.ids[i]! },
        el(
          'vr:DigestAlgAndValue',
          {},
          el('ds:DigestMethod', { Algorithm: SHA256_URI }),
          el('ds:DigestValue', {}, b64(digest('SHA-256', check.evidence.contents))),
        ),
        el('vr:HashOnly', {}, 'false'),
        el('vr:DocHashOnly', {}, 'false'),
        el('vr:DAIdentifier', {}, check.fieldName),
      ),
      el(
        'vr:ValidationTimeInfo',
        {},
        el('vr:ValidationTime', {}, context.validationTime.toISOString()),
        el(
          'vr:BestSignatureTime',
          {},
          el('vr:POETime', {}, best.time),
          el('vr:TypeOfProof', {}, 'urn:etsi:019102:poetype:validation'),
          best.object ? el('vr:POEObject', { VOReference: best.object }) : '',
        ),
      ),
      el('vr:SignatureAttributes', {}, ...attributes),
      signer
        ? el(
            'vr:SignerInformation',
            {},
            el('vr:SignerCertificate', { VOReference: certificateId(signer) }),
            el('vr:Signer', {}, check.signer?.subjectText ?? ''),
          )
        : '',
      el(
        'vr:SignatureQuality',
        {},
        // No trusted list is consulted: a signature is at best advanced (AdES), never called qualified.
        el(
          'vr:SignatureQualityInformation',
          {},
          check.level && check.indication === 'TOTAL_PASSED'
            ? 'urn:cef:dss:signatureQualification:AdESig'
            : 'urn:cef:dss:signatureQualification:notApplicable',
        ),
      ),
      el(
        'vr:SignatureValidationProcess',
        {},
        el('vr:SignatureValidationProcessID', {}, `urn:etsi:019102:validationprocess:${processOf(check)}`),
      ),
      el(
        'vr:SignatureValidationStatus',
        {},
        el('vr:MainIndication', {}, `urn:etsi:019102:mainindication:${etsiIndication(check)}`),
        check.subIndication
          ? el('vr:SubIndication', {}, `urn:etsi:019102:subindication:${check.subIndication}`)
          : '',
        el(
          'vr:AssociatedValidationReportData',
          {},
          trustAnchor ? el('vr:TrustAnchor', { VOReference: trustAnchor }) : '',
          chainIds.length
            ? el(
                'vr:CertificateChain',
                {},
                el('vr:SigningCertificate', { VOReference: chainIds[0]! }),
                ...chainIds
                  .slice(1, trustAnchor ? -1 : undefined)
                  .map((id) => el('vr:IntermediateCertificate', { VOReference: id })),
                trustAnchor ? el('vr:TrustAnchor', { VOReference: trustAnchor }) : '',
              )
            : '',
          ...unique([
            ...revocation.map((r) => r.id),
            ...(signatureTimestamp ? [signatureTimestamp] : []),
            ...documentTimestamps.map((ts) => ts.id),
          ]).map((id) => el('vr:RelatedValidationObject', { VOReference: id })),
          el(
            'vr:AdditionalValidationReportData',
            {},
            el(
              'vr:ReportData',
              {},
              el('vr:Type', {}, SIGNATURE_FORMAT_TYPE),
              el('vr:Value', {}, formatOf(check)),
            ),
          ),
        ),
      ),
    );
  });
  return document(
    el(
      'vr:ValidationReport',
      { 'xmlns:vr': NS.etsi, 'xmlns:ds': NS.ds },
      ...reports,
      objects.size() ? el('vr:SignatureValidationObjects', {}, ...objects.render()) : '',
      el('vr:SignatureValidator', {}, el('vr:DigitalId', {}, el('vr:X509SubjectName', {}, 'Signery'))),
    ),
  );
}

/** ReportData type naming the signature's format and the PAdES level the file proves (ours: TS 119 102-2 has none). */
const SIGNATURE_FORMAT_TYPE = 'urn:signery:validation:signatureFormat';

type ObjectType = 'certificate' | 'CRL' | 'OCSPResponse' | 'timestamp';

const OBJECT_PREFIX: Record<ObjectType, string> = {
  certificate: 'C',
  CRL: 'CRL',
  OCSPResponse: 'OCSP',
  timestamp: 'TST',
};

function revocationType(r: RevocationEvidence): ObjectType {
  return r.source === 'crl' ? 'CRL' : 'OCSPResponse';
}

/**
 * The report's validation objects: the certificates of every chain, the CRLs and OCSP responses the
 * chains were checked with, and the signature and document timestamps, each as base64 with its proof
 * of existence: the earliest document timestamp that covers it (in the DSS of the revision it
 * timestamps, or inside a signature it follows), else the validation itself.
 */
function validationObjects(context: Context) {
  const objects = new Map<string, { type: ObjectType; der: Uint8Array }>();
  const id = (type: ObjectType, der: Uint8Array): string => {
    const key =
      type === 'certificate'
        ? certificateId(der)
        : `${OBJECT_PREFIX[type]}-${hex(digest('SHA-256', der)).toUpperCase()}`;
    if (!objects.has(key)) objects.set(key, { type, der });
    return key;
  };
  for (const check of context.checks) {
    for (const der of check.evidence.chain) id('certificate', der);
    for (const r of [...check.evidence.revocation, ...check.evidence.timestampRevocation])
      id(revocationType(r), r.der);
    if (check.kind === 'document-timestamp') id('timestamp', check.evidence.contents);
    if (check.evidence.timestampToken) id('timestamp', check.evidence.timestampToken);
  }
  const documentTimestamps = context.checks
    .filter((c) => c.kind === 'document-timestamp' && c.indication !== 'TOTAL_FAILED' && c.timestamp)
    .sort((a, b) => a.timestamp!.genTime.localeCompare(b.timestamp!.genTime));
  const inStore = (store: DocumentSecurityStore | undefined, der: Uint8Array): boolean =>
    !!store && [...store.certificates, ...store.crls, ...store.ocsps].some((item) => bytesEqual(item, der));
  const contains = (outer: Uint8Array, der: Uint8Array): boolean =>
    Buffer.from(outer.buffer, outer.byteOffset, outer.length).indexOf(
      Buffer.from(der.buffer, der.byteOffset, der.length),
    ) !== -1;
  const poe = (der: Uint8Array): SignatureCheck | undefined =>
    documentTimestamps.find(
      (ts) =>
        inStore(ts.evidence.coveredDss, der) ||
        context.checks.some(
          (holder) =>
            holder.documentTimestamps.some((covering) => covering.fieldName === ts.fieldName) &&
            contains(holder.evidence.contents, der),
        ),
    );
  return {
    id,
    size: () => objects.size,
    inDss: (key: string): boolean => context.dss !== undefined && inStore(context.dss, objects.get(key)!.der),
    render: (): Xml[] =>
      [...objects].map(([key, { type, der }]) => {
        const proof = poe(der);
        return el(
          'vr:ValidationObject',
          { id: key },
          el('vr:ObjectType', {}, `urn:etsi:019102:validationObject:${type}`),
          el('vr:ValidationObjectRepresentation', {}, el('vr:base64', {}, b64(der))),
          el(
            'vr:POE',
            {},
            el('vr:POETime', {}, proof?.timestamp?.genTime ?? context.validationTime.toISOString()),
            el('vr:TypeOfProof', {}, 'urn:etsi:019102:poetype:validation'),
            proof ? el('vr:POEObject', { VOReference: id('timestamp', proof.evidence.contents) }) : '',
          ),
        );
      }),
  };
}

/**
 * The earliest time the signature is proven to exist: its signature timestamp when valid, else the
 * earliest document timestamp covering it, else the validation time.
 */
function bestSignatureTime(
  check: SignatureCheck,
  signatureTimestamp: string | undefined,
  documentTimestamps: { genTime: string; id: string }[],
  validationTime: Date,
  ownId: string | undefined,
): { time: string; object?: string } {
  if (check.timestamp?.valid) {
    // A document timestamp is its own proof.
    const object = check.kind === 'signature' ? signatureTimestamp : ownId;
    return { time: check.timestamp.genTime, ...(object ? { object } : {}) };
  }
  const [first] = documentTimestamps;
  if (first) return { time: first.genTime, object: first.id };
  return { time: validationTime.toISOString() };
}

function unique(ids: string[]): string[] {
  return [...new Set(ids)];
}

function simpleReport(context: Context): string {
  const valid = context.checks.filter((c) => c.indication === 'TOTAL_PASSED').length;
  const signatures = context.checks.map((check, i) =>
    el(
      check.kind === 'signature' ? 'Signature' : 'Timestamp',
      { Id: context.ids[i]!, SignatureFormat: formatOf(check) },
      check.claimedSigningTime ? el('SigningTime', {}, check.claimedSigningTime) : '',
      check.timestamp ? el('BestSignatureTime', {}, check.timestamp.genTime) : '',
      el('SignedBy', {}, check.signer?.commonName ?? check.signerName ?? ''),
      el('Indication', {}, check.indication),
      check.subIndication ? el('SubIndication', {}, check.subIndication) : '',
      ...check.problems.map((p) => el('Errors', {}, p)),
      ...check.warnings.map((w) => el('Warnings', {}, w)),
      el(
        'SignatureScope',
        { name: check.fieldName, scope: check.coversWholeFile ? 'FULL' : 'PARTIAL' },
        check.coversWholeFile
          ? 'The whole document'
          : `The document as of this signature's revision; ${check.revisionsAfter} incremental update(s) follow`,
      ),
    ),
  );
  return document(
    el(
      'SimpleReport',
      { xmlns: NS.simple },
      el(
        'ValidationPolicy',
        {},
        el('PolicyName', {}, POLICY),
        el('PolicyDescription', {}, policyDescription()),
      ),
      el('DocumentName', {}, context.documentName),
      el('ValidationTime', {}, context.validationTime.toISOString()),
      el('ValidSignaturesCount', {}, String(valid)),
      el('SignaturesCount', {}, String(context.checks.length)),
      ...signatures,
    ),
  );
}

function detailedReport(context: Context): string {
  const constraint = (name: string, ok: boolean | undefined, detail?: string): Xml =>
    el(
      'Constraint',
      {},
      el('Name', {}, name),
      el('Status', {}, ok === undefined ? 'IGNORED' : ok ? 'OK' : 'NOT OK'),
      detail ? el('AdditionalInfo', {}, detail) : '',
    );
  const signatures = context.checks.map((check, i) =>
    el(
      'Signature',
      { Id: context.ids[i]! },
      el(
        'ValidationProcessBasicSignature',
        {},
        constraint('Is the byte range well formed?', check.byteRangeValid),
        constraint('Does the message digest match the signed data?', check.digestValid),
        constraint('Is the signature value valid?', check.signatureValid),
        constraint(
          'Is the signing certificate trusted?',
          check.certificate.trusted,
          check.certificate.problems.join('; ') || undefined,
        ),
        constraint(
          'Is revocation data available and good?',
          check.certificate.revocation === 'unknown' ? undefined : check.certificate.revocation === 'good',
          check.certificate.revocationSources.join(', ') || undefined,
        ),
        check.timestamp
          ? constraint(
              'Is the timestamp valid and does it cover the data?',
              check.timestamp.valid && check.timestamp.coversData,
            )
          : '',
        constraint(
          'Does the signature cover the whole document?',
          check.coversWholeFile,
          check.coversWholeFile
            ? undefined
            : `${check.revisionsAfter} incremental update(s) after the signature`,
        ),
        el(
          'Conclusion',
          {},
          el('Indication', {}, check.indication),
          check.subIndication ? el('SubIndication', {}, check.subIndication) : '',
        ),
      ),
    ),
  );
  return document(
    el(
      'DetailedReport',
      { xmlns: NS.detailed },
      el('ValidationTime', {}, context.validationTime.toISOString()),
      ...signatures,
    ),
  );
}

function diagnosticData(context: Context): string {
  const signatures = context.checks.map((check, i) => {
    const cms = check.evidence.cms;
    return el(
      'Signature',
      { Id: context.ids[i]! },
      el('SignatureFilename', {}, context.documentName),
      check.claimedSigningTime ? el('ClaimedSigningTime', {}, check.claimedSigningTime) : '',
      el('SignatureFormat', {}, formatOf(check)),
      el('StructuralValidation', {}, el('Valid', {}, String(check.byteRangeValid))),
      el(
        'DigestMatchers',
        {},
        el(
          'DigestMatcher',
          { type: 'MESSAGE_DIGEST' },
          el('DataFound', {}, 'true'),
          el('DataIntact', {}, String(check.digestValid)),
        ),
      ),
      el(
        'BasicSignature',
        {},
        el('DigestAlgoUsedToSignThisToken', {}, cms?.digestAlgorithm ?? ''),
        el('SignatureAlgorithmOid', {}, cms?.signatureAlgorithmOid ?? ''),
        el('SignatureIntact', {}, String(check.signatureValid)),
        el('SignatureValid', {}, String(check.signatureValid && check.digestValid)),
      ),
      check.evidence.chain[0]
        ? el('SigningCertificate', { Certificate: certificateId(check.evidence.chain[0]) })
        : '',
      el(
        'CertificateChain',
        {},
        ...check.evidence.chain.map((der) => el('ChainItem', { Certificate: certificateId(der) })),
      ),
      check.timestamp
        ? el(
            'FoundTimestamps',
            {},
            el(
              'FoundTimestamp',
              { Type: check.kind === 'signature' ? 'SIGNATURE_TIMESTAMP' : 'DOCUMENT_TIMESTAMP' },
              el('ProductionTime', {}, check.timestamp.genTime),
              el('Valid', {}, String(check.timestamp.valid)),
              el('TSA', {}, check.timestamp.tsa ?? ''),
            ),
          )
        : '',
      el(
        'PDFRevision',
        {},
        el('SignatureFieldName', {}, check.fieldName),
        el(
          'PDFSignatureDictionary',
          {},
          check.signerName ? el('SignerName', {}, check.signerName) : '',
          el('SubFilter', {}, check.subFilter),
          check.reason ? el('Reason', {}, check.reason) : '',
          check.location ? el('Location', {}, check.location) : '',
          el('SignatureByteRange', {}, check.byteRange.join(' ')),
        ),
        el('RevisionsAfter', {}, String(check.revisionsAfter)),
      ),
    );
  });
  const used = [...context.certificates].map(([id, der]) => {
    const fields = certificateFields(der);
    return el(
      'Certificate',
      { Id: id },
      el('SubjectDistinguishedName', { Format: 'RFC2253' }, fields.subjectText),
      el('IssuerDistinguishedName', { Format: 'RFC2253' }, fields.issuerText),
      el('SerialNumber', {}, hex(fields.serialNumber)),
      el('NotBefore', {}, fields.notBefore.toISOString()),
      el('NotAfter', {}, fields.notAfter.toISOString()),
      el('CA', {}, String(fields.isCa)),
      el('Base64Encoded', {}, b64(der)),
    );
  });
  return document(
    el(
      'DiagnosticData',
      { xmlns: NS.diagnostic },
      el('DocumentName', {}, context.documentName),
      el('ValidationDate', {}, context.validationTime.toISOString()),
      el('Signatures', {}, ...signatures),
      el('UsedCertificates', {}, ...used),
    ),
  );
}

function formatOf(check: SignatureCheck): string {
  if (check.kind === 'document-timestamp') return 'PDF-DOC-TIMESTAMP';
  if (check.level) return `PAdES-BASELINE-${check.level.slice(2)}`;
  return check.subFilter === 'ETSI.CAdES.detached' ? 'PAdES-NOT-ETSI' : 'PKCS7';
}

function processOf(check: SignatureCheck): string {
  if (check.level === 'B-LTA') return 'LTA';
  if (check.level === 'B-T' || check.level === 'B-LT') return 'LTVM';
  return 'Basic';
}

function etsiIndication(check: SignatureCheck): string {
  return check.indication === 'TOTAL_PASSED'
    ? 'total-passed'
    : check.indication === 'TOTAL_FAILED'
      ? 'total-failed'
      : 'indeterminate';
}

function policyDescription(): string {
  return (
    'Byte range, message digest, signature value and signing-certificate binding must hold; the chain must end at a ' +
    'configured trust anchor; a revoked certificate fails; missing revocation data is a warning.'
  );
}

function certificateId(der: Uint8Array): string {
  return `C-${hex(digest('SHA-256', der)).toUpperCase()}`;
}

function document(root: Xml): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n${root.xml}`;
}

/** Markup, as opposed to text (which `el` escapes). */
class Xml {
  constructor(readonly xml: string) {}
}

/** An element: string children are text and get escaped, `Xml` children are markup; empty ones are dropped. */
function el(name: string, attributes: Record<string, string>, ...children: (string | Xml)[]): Xml {
  const attrs = Object.entries(attributes)
    .map(([key, value]) => ` ${key}="${escapeXml(value)}"`)
    .join('');
  const body = children
    .map((child) => (child instanceof Xml ? child.xml : escapeXml(child)))
    .filter((child) => child !== '');
  if (body.length === 0) return new Xml(`<${name}${attrs}/>`);
  return new Xml(`<${name}${attrs}>${body.join('')}</${name}>`);
}

function escapeXml(text: string): string {
  return (
    text
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      // Characters XML 1.0 cannot carry at all.
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
  );
}

function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64');
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

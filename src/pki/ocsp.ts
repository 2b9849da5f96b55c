import { webcrypto, type KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { toDer } from './der.js';

const SHA1 = '1.3.14.3.2.26';
const BASIC_RESPONSE = '1.3.6.1.5.5.7.48.1.1';

/**
 * An OCSP request (RFC 6960) for one certificate, with a SHA-1 CertID as every responder understands
 * it (OpenSSL's, and the dev CA's).
 *
 * ```ts
 * const body = await ocspRequest(certificate, issuer); // POST as application/ocsp-request
 * ```
 */
export async function ocspRequest(certificate: Uint8Array, issuer: Uint8Array): Promise<Uint8Array> {
  const certId = new pkijs.CertID();
  await certId.createForCertificate(pkijs.Certificate.fromBER(certificate), {
    hashAlgorithm: 'SHA-1',
    issuerCertificate: pkijs.Certificate.fromBER(issuer),
  });
  const request = new pkijs.OCSPRequest();
  request.tbsRequest.requestList = [new pkijs.Request({ reqCert: certId })];
  return toDer(request.toSchema(true));
}

/** When an OCSP answer was made and until when it may be relied on (its first single response). */
export function ocspValidity(response: Uint8Array): { thisUpdate: Date; nextUpdate?: Date } {
  const parsed = pkijs.OCSPResponse.fromBER(response);
  const bytes = parsed.responseBytes;
  if (!bytes) throw new Error('The OCSP response carries no answer');
  const basic = pkijs.BasicOCSPResponse.fromBER(bytes.response.valueBlock.valueHexView);
  const [single] = basic.tbsResponseData.responses;
  if (!single) throw new Error('The OCSP response answers for no certificate');
  return { thisUpdate: single.thisUpdate, ...(single.nextUpdate ? { nextUpdate: single.nextUpdate } : {}) };
}

/** What an OCSP responder says of a serial number it is asked about. */
export type OcspStatus = { status: 'good' } | { status: 'revoked'; since: Date } | { status: 'unknown' };

/**
 * Answers an OCSP request as a CA's own responder (RFC 6960; the CA signs its answers itself, which
 * RFC 6960 4.2.2.2 allows): for the development CA, whose certificates name Signery's /pki/ocsp. The
 * request's nonce is echoed. A request for another issuer, or one that cannot be read, gets the
 * `unauthorized` or `malformedRequest` status, which carries no answer.
 *
 * ```ts
 * const der = await answerOcsp({ request, issuer: { certificate, privateKey }, statusOf: () => ({ status: 'good' }), now, validForMs });
 * ```
 */
export async function answerOcsp(options: {
  request: Uint8Array;
  issuer: { certificate: Uint8Array; privateKey: KeyObject };
  statusOf: (serialNumberHex: string) => OcspStatus;
  now: Date;
  validForMs: number;
}): Promise<Uint8Array> {
  let request: pkijs.OCSPRequest;
  try {
    request = pkijs.OCSPRequest.fromBER(options.request);
  } catch {
    return statusOnly(1); // malformedRequest
  }
  const issuer = pkijs.Certificate.fromBER(options.issuer.certificate);
  const responses: pkijs.SingleResponse[] = [];
  for (const { reqCert } of request.tbsRequest.requestList) {
    if (reqCert.hashAlgorithm.algorithmId !== SHA1 || !reqCert.isEqual(await certIdOf(reqCert, issuer)))
      return statusOnly(6); // unauthorized: not this CA's certificate
    const serial = Buffer.from(reqCert.serialNumber.valueBlock.valueHexView).toString('hex');
    const answer = options.statusOf(serial);
    responses.push(
      new pkijs.SingleResponse({
        certID: reqCert,
        certStatus: certStatus(answer),
        thisUpdate: options.now,
        nextUpdate: new Date(options.now.getTime() + options.validForMs),
      }),
    );
  }
  const nonce = request.tbsRequest.requestExtensions?.find((e) => e.extnID === '1.3.6.1.5.5.7.48.1.2');
  const basic = new pkijs.BasicOCSPResponse({
    tbsResponseData: new pkijs.ResponseData({
      responderID: issuer.subject,
      producedAt: options.now,
      responses,
      ...(nonce ? { responseExtensions: [nonce] } : {}),
    }),
    certs: [issuer],
  });
  const key = await webcrypto.subtle.importKey(
    'pkcs8',
    options.issuer.privateKey.export({ type: 'pkcs8', format: 'der' }),
    signingAlgorithm(options.issuer.privateKey),
    false,
    ['sign'],
  );
  await basic.sign(key, 'SHA-256');
  const response = new pkijs.OCSPResponse({
    responseStatus: new asn1js.Enumerated({ value: 0 }),
    responseBytes: new pkijs.ResponseBytes({
      responseType: BASIC_RESPONSE,
      response: new asn1js.OctetString({ valueHex: basic.toSchema().toBER(false) }),
    }),
  });
  return toDer(response.toSchema());
}

async function certIdOf(reqCert: pkijs.CertID, issuer: pkijs.Certificate): Promise<pkijs.CertID> {
  // A CertID for the requested serial under this issuer, to compare the issuer hashes with the request's.
  const probe = new pkijs.Certificate();
  probe.serialNumber = reqCert.serialNumber;
  probe.issuer = issuer.subject;
  const id = new pkijs.CertID();
  await id.createForCertificate(probe, { hashAlgorithm: 'SHA-1', issuerCertificate: issuer });
  return id;
}

function certStatus(answer: OcspStatus): asn1js.BaseBlock {
  if (answer.status === 'good')
    return new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 0 }, lenBlock: { length: 1 } });
  if (answer.status === 'unknown')
    return new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 2 }, lenBlock: { length: 1 } });
  return new asn1js.Constructed({
    idBlock: { tagClass: 3, tagNumber: 1 },
    value: [new asn1js.GeneralizedTime({ valueDate: answer.since })],
  });
}

function statusOnly(status: number): Uint8Array {
  return toDer(
    new pkijs.OCSPResponse({ responseStatus: new asn1js.Enumerated({ value: status }) }).toSchema(),
  );
}

function signingAlgorithm(key: KeyObject): webcrypto.RsaHashedImportParams | webcrypto.EcKeyImportParams {
  if (key.asymmetricKeyType === 'ec') return { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
}

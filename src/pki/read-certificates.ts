import { X509Certificate } from 'node:crypto';
import { derLength } from './der.js';

/**
 * The certificates of a file as people hand them over: PEM (any number of blocks) or DER (one
 * certificate, or several one after another), in file order; undefined unless every one is a
 * readable X.509 certificate (and there is at least one).
 *
 * ```ts
 * const [leaf, ...chain] = readCertificates(upload) ?? fail('must be a PEM or DER X.509 certificate');
 * ```
 */
export function readCertificates(file: Uint8Array): Uint8Array[] | undefined {
  const text = Buffer.from(file).toString('latin1');
  const pem = [...text.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)];
  const ders: Uint8Array[] = [];
  if (pem.length > 0) {
    for (const block of pem) ders.push(new Uint8Array(Buffer.from(block[1] ?? '', 'base64')));
  } else {
    let rest = file;
    while (rest.length > 0) {
      const length = readableLength(rest);
      if (length === undefined) break;
      ders.push(rest.subarray(0, length));
      rest = rest.subarray(length);
    }
  }
  return ders.length > 0 && ders.every(isCertificate) ? ders : undefined;
}

function readableLength(der: Uint8Array): number | undefined {
  try {
    const length = derLength(der);
    return length > 0 && length <= der.length ? length : undefined;
  } catch {
    return undefined;
  }
}

function isCertificate(der: Uint8Array): boolean {
  try {
    new X509Certificate(der);
    return true;
  } catch {
    return false;
  }
}

import { X509Certificate } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readCertificates } from './read-certificates.js';
import type { Signer } from './signers/signer.js';

/**
 * The roots named by TRUST_ANCHORS: a PEM (or DER) file of one or more certificates, or a directory
 * whose files (`.pem`, `.crt`, `.cer`, `.der`) are read in name order. A file that holds no readable
 * certificate is an error naming it: an operator's trust list is never silently shorter.
 *
 * ```ts
 * const anchors = await loadTrustAnchors('/etc/signery/roots');
 * ```
 */
export async function loadTrustAnchors(path: string): Promise<Uint8Array[]> {
  const files = (await stat(path)).isDirectory()
    ? (await readdir(path))
        .filter((name) => /\.(pem|crt|cer|der)$/i.test(name))
        .sort()
        .map((name) => join(path, name))
    : [path];
  const anchors: Uint8Array[] = [];
  for (const file of files) {
    const certificates = readCertificates(new Uint8Array(await readFile(file)));
    if (!certificates) throw new Error(`TRUST_ANCHORS: ${file} holds no readable X.509 certificate`);
    anchors.push(...certificates);
  }
  return anchors;
}

/**
 * The root of the seal key's own chain, trusted by default so that the installation's own seals verify
 * (issue 38): the self-signed certificates the PKCS#12 file or the token carries, else the top of the
 * chain it carries (the issuer nearest the root that it has), else the seal certificate itself.
 *
 * ```ts
 * const anchors = ownChainAnchors(signer); // [root]
 * ```
 */
export function ownChainAnchors(signer: Pick<Signer, 'certificate' | 'chain'>): Uint8Array[] {
  const all = [signer.certificate, ...signer.chain];
  const roots = all.filter((der) => {
    const certificate = new X509Certificate(der);
    return certificate.checkIssued(certificate) && certificate.verify(certificate.publicKey);
  });
  if (roots.length > 0) return roots;
  return [all[all.length - 1]!];
}

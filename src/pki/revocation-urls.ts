import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

/**
 * Where a certificate says its revocation status is published: the OCSP responders of its Authority
 * Information Access extension and the CRL distribution points (http and https addresses only; LDAP
 * and other schemes are not fetched).
 *
 * ```ts
 * const { ocsp, crl } = revocationUrls(certificate);
 * ```
 */
export function revocationUrls(certificate: Uint8Array): { ocsp: string[]; crl: string[] } {
  const cert = new x509.X509Certificate(certificate);
  const access = cert.getExtension(x509.AuthorityInfoAccessExtension);
  const ocsp = (access?.ocsp ?? []).filter((name) => name.type === 'url').map((name) => name.value);
  const points = cert.getExtension(x509.CRLDistributionPointsExtension);
  const crl = (points?.distributionPoints ?? []).flatMap((point) =>
    (point.distributionPoint?.fullName ?? []).flatMap((name) =>
      name.uniformResourceIdentifier ? [name.uniformResourceIdentifier] : [],
    ),
  );
  const web = (url: string) => /^https?:\/\//i.test(url);
  return { ocsp: [...ocsp.filter(web)], crl: [...crl.filter(web)] };
}

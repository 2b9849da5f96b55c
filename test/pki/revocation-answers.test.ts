import 'reflect-metadata';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { X509Crl } from '@peculiar/x509';
import { validateCertificateChain } from '../../src/pki/validate-certificate-chain.js';
import { startOpensslPki, type OpensslPki } from '../fixtures/openssl-pki.js';

// A CRL's or an OCSP response's word on a certificate depends on nothing but bytes, so one verification
// hands it to the next (ValidationCache.rememberAcross); the time of validation and the caller's copy
// must stay each call's own.
describe('revocation answers remembered across validations', () => {
  let pki: OpensslPki;
  let crl: Uint8Array;

  before(async () => {
    pki = await startOpensslPki();
    crl = new Uint8Array(await readFile(join(pki.dir, 'intermediate.crl')));
  });
  after(() => pki.close());

  const validate = (at: Date) =>
    validateCertificateChain({
      certificate: pki.certificates.revokedSeal,
      intermediates: [pki.certificates.intermediate],
      trustAnchors: [pki.certificates.root],
      at,
      crls: [crl],
    });

  it('the same CRL says revoked after the revocation date and good before it, however often it was read', async () => {
    const revokedAt = new X509Crl(crl).entries[0]!.revocationDate;
    const thisUpdate = new X509Crl(crl).thisUpdate.getTime();
    for (let round = 0; round < 2; round++) {
      const later = await validate(new Date(revokedAt.getTime() + 60_000));
      assert.equal(later.revocation, 'revoked', `round ${round}`);
      assert.equal(later.revocationAnswers[0]?.status, 'revoked');
      // A caller changing its copy changes no other validation's.
      const issuedAt = later.revocationAnswers[0]?.issuedAt;
      assert.ok(issuedAt);
      issuedAt.setTime(0);
      const earlier = await validate(new Date(revokedAt.getTime() - 60_000));
      assert.equal(earlier.revocationAnswers[0]?.status, 'good', `round ${round}`);
      assert.equal(earlier.revocationAnswers[0]?.issuedAt?.getTime(), thisUpdate);
    }
  });
});

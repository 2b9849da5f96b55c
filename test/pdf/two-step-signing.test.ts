import assert from 'node:assert/strict';
import { createHash, privateEncrypt, constants, sign, type KeyObject } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { finishSignature } from '../../src/pdf/finish-signature.js';
import { finishSignatureFromFile } from '../../src/pdf/finish-signature-from-file.js';
import { prepareSignature } from '../../src/pdf/prepare-signature.js';
import { preparedStateFromJson, preparedStateToJson } from '../../src/pdf/prepared-signature.js';
import { PreparedSignatureMismatch } from '../../src/pdf/errors.js';
import { verifyPdf } from '../../src/pdf/verify-pdf.js';
import { buildSignedData } from '../../src/pki/cms/signed-data.js';
import { SignatureValueInvalid } from '../../src/pki/errors.js';
import type { Signer } from '../../src/pki/signers/signer.js';
import { qrPng } from '../../src/pdf/barcode.js';
import { onePagePdf } from '../fixtures/pdf-fixtures.js';
import { createTestPki, type TestPki } from '../fixtures/test-pki.js';

// DigestInfo prefixes (RFC 8017 9.2 note 1): an external RSA signer wraps the digest it receives in these.
const DIGEST_INFO: Record<string, string> = {
  'SHA-256': '3031300d060960864801650304020105000420',
  'SHA-384': '3041300d060960864801650304020205000430',
  'SHA-512': '3051300d060960864801650304020305000440',
};

/** What a smart card does with the digest the API hands out: PKCS#1 v1.5 over DigestInfo(digest). */
function signDigestWithRsa(privateKey: KeyObject, digest: Uint8Array, algorithm: string): Uint8Array {
  const digestInfo = Buffer.concat([Buffer.from(DIGEST_INFO[algorithm]!, 'hex'), digest]);
  return new Uint8Array(
    privateEncrypt({ key: privateKey, padding: constants.RSA_PKCS1_PADDING }, digestInfo),
  );
}

describe('two-step signing (Contract: start/digest then finish/digest, stateless between them)', () => {
  let pki: TestPki;
  let rsa: Signer & { privateKey: KeyObject };
  let ec: Signer & { privateKey: KeyObject };
  let revocation: { crls: Uint8Array[]; ocsps: Uint8Array[] };

  before(async () => {
    pki = await createTestPki();
    rsa = await pki.signer({ name: 'Card Holder' });
    ec = await pki.signer({ name: 'EC Card Holder', key: 'ECDSA' });
    revocation = await pki.status();
  });

  /** A one-page PDF prepared for `signer`'s certificate now (prepareSignature), with more `options`. */
  const prepareFor = (
    signer: Signer,
    signerName: string,
    options: Partial<Parameters<typeof prepareSignature>[0]> = {},
  ) =>
    prepareSignature({
      pdf: onePagePdf().bytes,
      certificate: signer.certificate,
      chain: signer.chain,
      signerName,
      signingTime: new Date(),
      // The status a signing service establishes before signing (issue 38), signed with the signature.
      revocation,
      ...options,
    });
  type Prepared = Awaited<ReturnType<typeof prepareSignature>>;
  /** The prepared file with a CMS the client built itself (`signer`'s RSA signature) in its /Contents. */
  const signedByClient = async (prepared: Prepared, signer: Signer) => {
    const cms = buildSignedData({
      signedAttributes: prepared.state.signedAttributes,
      signatureValue: await signer.sign({
        data: prepared.state.signedAttributes,
        digestAlgorithm: 'SHA-256',
      }),
      certificate: signer.certificate,
      chain: signer.chain,
      digestAlgorithm: 'SHA-256',
      keyAlgorithm: 'RSA',
    });
    const signed = new Uint8Array(prepared.pdf);
    signed.set(Buffer.from(Buffer.from(cms).toString('hex'), 'latin1'), prepared.state.byteRange[1] + 1);
    return signed;
  };

  for (const digestAlgorithm of ['SHA-256', 'SHA-384', 'SHA-512'] as const) {
    it(`an external party signs the ${digestAlgorithm} digest; finish embeds it after a JSON round trip`, async () => {
      const prepared = await prepareFor(rsa, 'Card Holder', {
        digestAlgorithm,
        signatures: [
          {
            type: 'signature',
            pages: [1],
            position: { percentX: 0.1, percentY: 0.7, percentWidth: 0.3, percentHeight: 0.1 },
            image: await qrPng('two-step'),
          },
        ],
      });
      // The digest is the hash of the DER signed attributes (Contract).
      const expected = createHash(digestAlgorithm.replace('-', '').toLowerCase())
        .update(prepared.state.signedAttributes)
        .digest();
      assert.ok(Buffer.from(prepared.state.digest).equals(expected));
      // Another node finishes the session from stored JSON and the prepared file.
      const stored = JSON.parse(JSON.stringify(preparedStateToJson(prepared.state))) as ReturnType<
        typeof preparedStateToJson
      >;
      const signatureValue = signDigestWithRsa(rsa.privateKey, prepared.state.digest, digestAlgorithm);
      const { pdf } = await finishSignature({
        pdf: prepared.pdf,
        prepared: preparedStateFromJson(stored),
        signatureValue,
      });
      const [check] = (await verifyPdf({ pdf, trustAnchors: [pki.root.certificate] })).signatures;
      assert.equal(check!.indication, 'TOTAL_PASSED', JSON.stringify(check!.problems));
      assert.equal(pdf.length, prepared.pdf.length, 'only /Contents was filled in');
    });
  }

  it('ECDSA signatures are accepted as DER and as raw r||s', async () => {
    for (const dsaEncoding of ['der', 'ieee-p1363'] as const) {
      const prepared = await prepareFor(ec, 'EC');
      const signatureValue = sign('sha256', prepared.state.signedAttributes, {
        key: ec.privateKey,
        dsaEncoding,
      });
      const { pdf } = await finishSignature({ pdf: prepared.pdf, prepared: prepared.state, signatureValue });
      const [check] = (await verifyPdf({ pdf, trustAnchors: [pki.root.certificate] })).signatures;
      assert.equal(check!.indication, 'TOTAL_PASSED', dsaEncoding);
    }
  });

  it('a signature value that does not verify is refused with SignatureValueInvalid before embedding', async () => {
    const prepared = await prepareFor(rsa, 'Card Holder');
    const wrongKey = await pki.signer({ name: 'Somebody Else' });
    const wrong = await wrongKey.sign({ data: prepared.state.signedAttributes, digestAlgorithm: 'SHA-256' });
    await assert.rejects(
      finishSignature({ pdf: prepared.pdf, prepared: prepared.state, signatureValue: wrong }),
      SignatureValueInvalid,
    );
    // A signature over another digest (SHA-512 instead of the session's SHA-256).
    const otherDigest = signDigestWithRsa(
      rsa.privateKey,
      createHash('sha512').update(prepared.state.signedAttributes).digest(),
      'SHA-512',
    );
    await assert.rejects(
      finishSignature({ pdf: prepared.pdf, prepared: prepared.state, signatureValue: otherDigest }),
      SignatureValueInvalid,
    );
  });

  it('finish refuses a PDF that is not the prepared one, or one already finished', async () => {
    const prepared = await prepareFor(rsa, 'Card Holder');
    const signatureValue = await rsa.sign({
      data: prepared.state.signedAttributes,
      digestAlgorithm: 'SHA-256',
    });
    const changed = new Uint8Array(prepared.pdf);
    changed[100] = changed[100]! ^ 1;
    await assert.rejects(
      finishSignature({ pdf: changed, prepared: prepared.state, signatureValue }),
      PreparedSignatureMismatch,
    );
    const { pdf } = await finishSignature({ pdf: prepared.pdf, prepared: prepared.state, signatureValue });
    await assert.rejects(
      finishSignature({ pdf, prepared: prepared.state, signatureValue }),
      PreparedSignatureMismatch,
    );
  });

  it('finish/file accepts the prepared file with only /Contents filled in, and nothing else', async () => {
    const prepared = await prepareFor(rsa, 'Card Holder');
    // The client embeds a CMS itself.
    const signed = await signedByClient(prepared, rsa);
    assert.equal(finishSignatureFromFile({ prepared: prepared.pdf, state: prepared.state, signed }), signed);

    const edited = new Uint8Array(signed);
    edited[50] = edited[50]! ^ 1;
    assert.throws(
      () => finishSignatureFromFile({ prepared: prepared.pdf, state: prepared.state, signed: edited }),
      PreparedSignatureMismatch,
    );
    const wrong = await signedByClient(prepared, await pki.signer({ name: 'Other' }));
    assert.throws(
      () => finishSignatureFromFile({ prepared: prepared.pdf, state: prepared.state, signed: wrong }),
      SignatureValueInvalid,
    );
  });
});

import assert from 'node:assert/strict';
import { sign } from 'node:crypto';
import { before, describe, it } from 'node:test';
import type * as asn1js from 'asn1js';
import { OID, digest } from '../../src/pki/algorithms.js';
import {
  buildSignedAttributes,
  messageDigestOf,
  readSignedAttributes,
} from '../../src/pki/cms/signed-attributes.js';
import { children, readTlv, set } from '../../src/pki/der-bytes.js';
import { buildSignedData, type BuildSignedDataOptions } from '../../src/pki/cms/signed-data.js';
import { pkijsSignedAttributes, pkijsSignedData } from './pkijs-signed-data.js';
import { readSignedData } from '../../src/pki/cms/read-signed-data.js';
import { verifySignedData } from '../../src/pki/cms/verify-signed-data.js';
import { pem } from '../../src/pki/dev-ca.js';
import { CertificateInvalid, SignatureValueInvalid } from '../../src/pki/errors.js';
import { verifySignatureValue } from '../../src/pki/verify-signature-value.js';
import { createTestPki, type TestPki } from '../fixtures/test-pki.js';
import { hasTool, opensslVerifies, workspace } from '../pdf/oracles.js';

describe('CMS for PAdES (DESIGN: signed attributes built with pkijs)', () => {
  let pki: TestPki;
  const content = new Uint8Array(Buffer.from('the signed byte ranges of a PDF'));

  before(async () => {
    pki = await createTestPki();
  });

  type Signer = Awaited<ReturnType<TestPki['signer']>>;

  /**
   * A CMS over `content` by `signer` (SHA-256, its chain embedded), with more of buildSignedData's
   * parts (`contentType` also goes into the signed attributes).
   */
  async function aCms(signer: Signer, more: Partial<BuildSignedDataOptions> = {}) {
    const signedAttributes = buildSignedAttributes({
      messageDigest: digest('SHA-256', content),
      certificate: signer.certificate,
      ...(more.contentType ? { contentType: more.contentType } : {}),
    });
    const signatureValue = await signer.sign({ data: signedAttributes, digestAlgorithm: 'SHA-256' });
    const cms = buildSignedData({
      signedAttributes,
      signatureValue,
      certificate: signer.certificate,
      chain: signer.chain,
      digestAlgorithm: 'SHA-256',
      keyAlgorithm: signer.keyAlgorithm,
      ...more,
    });
    return { signedAttributes, cms };
  }

  it('signed attributes are exactly content-type, message-digest and signing-certificate-v2, DER-sorted', async () => {
    const signer = await pki.signer({ name: 'Attr' });
    const der = buildSignedAttributes({
      messageDigest: digest('SHA-256', content),
      certificate: signer.certificate,
    });
    assert.equal(der[0], 0x31, 'a SET');
    const attributes = readSignedAttributes(der);
    assert.deepEqual(
      attributes.map((a) => a.type).sort(),
      [OID.contentType, OID.messageDigest, OID.signingCertificateV2].sort(),
    );
    assert.ok(!attributes.some((a) => a.type === OID.signingTime), 'no signing-time (EN 319 142-1)');
    const encodings = attributes.map((a) => Buffer.from(a.toSchema().toBER()));
    const sorted = [...encodings].sort((a, b) => Buffer.compare(a, b));
    assert.deepEqual(encodings, sorted, 'DER SET OF order');
    // signing-certificate-v2 names this certificate: ESSCertIDv2.certHash is its SHA-256.
    const ess = attributes.find((a) => a.type === OID.signingCertificateV2)!.values[0] as asn1js.Sequence;
    const certHash = ((ess.valueBlock.value[0] as asn1js.Sequence).valueBlock.value[0] as asn1js.Sequence)
      .valueBlock.value[0] as asn1js.OctetString;
    assert.ok(
      Buffer.from(certHash.valueBlock.valueHexView).equals(
        Buffer.from(digest('SHA-256', signer.certificate)),
      ),
    );
  });

  it('signed attributes are byte for byte what pkijs builds; their digest reads back, also from a copy', async () => {
    for (const key of ['RSA', 'ECDSA'] as const) {
      const signer = await pki.signer({ name: `Attributes ${key}`, key });
      for (const contentType of [undefined, OID.tstInfo]) {
        const options = {
          messageDigest: digest('SHA-256', content),
          certificate: signer.certificate,
          contentType,
        };
        const built = buildSignedAttributes(options);
        assert.equal(
          Buffer.from(built).toString('hex'),
          Buffer.from(pkijsSignedAttributes(options)).toString('hex'),
          `${key} ${contentType ?? 'id-data'}`,
        );
        // A copy is not known as built here: read after the DER check, as a two-step finish does.
        for (const der of [built, new Uint8Array(built)]) {
          assert.deepEqual(Buffer.from(messageDigestOf(der)!), Buffer.from(options.messageDigest));
        }
      }
    }
  });

  it('attributes from outside that are not DER (a length in more bytes than needed, members out of order) are refused', async () => {
    const signer = await pki.signer({ name: 'Not DER' });
    const der = buildSignedAttributes({
      messageDigest: digest('SHA-256', content),
      certificate: signer.certificate,
    });
    const { content: members } = readTlv(der);
    assert.ok(members.length > 127 && members.length < 256);
    const padded = Uint8Array.from([0x31, 0x82, 0x00, members.length, ...members]);
    assert.throws(() => messageDigestOf(padded), CertificateInvalid);
    // The same members out of their DER order (X.690 11.6).
    const unsorted = set(
      ...children(readTlv(der))
        .map((member) => member.bytes)
        .reverse(),
    );
    assert.throws(() => messageDigestOf(unsorted), CertificateInvalid);
  });

  it('the CMS built from attributes and a raw signature verifies with openssl and with our reader', async () => {
    const space = await workspace();
    try {
      for (const key of ['RSA', 'ECDSA'] as const) {
        const signer = await pki.signer({ name: `CMS ${key}`, key });
        const { signedAttributes, cms } = await aCms(signer);
        const parsed = readSignedData({ der: cms });
        assert.ok(
          Buffer.from(parsed.signedAttributes!).equals(Buffer.from(signedAttributes)),
          'embedded attributes are the signed bytes',
        );
        const hex = (der: Uint8Array): string => Buffer.from(der).toString('hex');
        assert.deepEqual(
          parsed.certificates.map(hex).sort(),
          [signer.certificate, ...signer.chain].map(hex).sort(),
          'certificates are embedded byte for byte',
        );
        const check = verifySignedData({ cms: parsed, content });
        assert.ok(check.digestMatches && check.signatureValid && check.signingCertificateMatches, key);
        if (hasTool('openssl')) {
          const caFile = await space.write('ca.pem', pem('CERTIFICATE', pki.root.certificate));
          const ok = await opensslVerifies(
            { cms: await space.write(`${key}.p7s`, cms), content: await space.write(`${key}.bin`, content) },
            caFile,
          );
          assert.ok(ok, `openssl cms -verify (${key})`);
        }
      }
    } finally {
      await space.remove();
    }
  });

  it('the CMS is byte for byte what pkijs builds from the same parts (RSA, ECDSA, timestamp, SHA-512)', async () => {
    for (const key of ['RSA', 'ECDSA'] as const) {
      const signer = await pki.signer({ name: `Bytes ${key}`, key });
      const signedAttributes = buildSignedAttributes({
        messageDigest: digest('SHA-256', content),
        certificate: signer.certificate,
      });
      const signatureValue = await signer.sign({ data: signedAttributes, digestAlgorithm: 'SHA-256' });
      const parts = {
        signedAttributes,
        signatureValue,
        certificate: signer.certificate,
        // The signer's certificate again in the chain: embedded once.
        chain: [...signer.chain, signer.certificate],
        digestAlgorithm: 'SHA-256' as const,
        keyAlgorithm: signer.keyAlgorithm,
      };
      const variants = [
        parts,
        // Any DER value stands in for the token: it is embedded as it is.
        { ...parts, timestampToken: pki.root.certificate },
        { ...parts, digestAlgorithm: 'SHA-512' as const },
      ];
      for (const [i, variant] of variants.entries()) {
        assert.equal(
          Buffer.from(buildSignedData(variant)).toString('hex'),
          Buffer.from(pkijsSignedData(variant)).toString('hex'),
          `${key} variant ${i}`,
        );
      }
      // Encapsulated content (a TSA's TSTInfo): a primitive OCTET STRING, as DER wants (pkijs writes
      // a constructed BER one), read back as it went in.
      const encapsulated = readSignedData({
        der: buildSignedData({ ...parts, contentType: OID.tstInfo, content }),
      });
      assert.equal(encapsulated.contentType, OID.tstInfo);
      assert.deepEqual(Buffer.from(encapsulated.content!), Buffer.from(content));
    }
  });

  it('a CMS reads the same whether its certificates were read before or not (they are checked once per content), and one whose certificate asn1js cannot read is refused as before, also inside its timestamp token', async () => {
    const signer = await pki.signer({ name: 'Set aside' });
    const tsa = await pki.signer({ name: 'Set aside TSA' });
    // A stand-in for a timestamp token: a CMS over encapsulated content, carrying the TSA's chain.
    const { cms: timestampToken } = await aCms(tsa, { contentType: OID.tstInfo, content });
    const { cms } = await aCms(signer, { timestampToken });
    const hex = (der: Uint8Array): string => Buffer.from(der).toString('hex');
    for (const round of ['first', 'again']) {
      const parsed = readSignedData({ der: new Uint8Array(cms) });
      assert.deepEqual(
        parsed.certificates.map(hex).sort(),
        [signer.certificate, ...signer.chain].map(hex).sort(),
        round,
      );
      assert.equal(hex(parsed.signerCertificate!), hex(signer.certificate), round);
      assert.deepEqual(parsed.timestampTokens.map(hex), [hex(timestampToken)], round);
      const token = readSignedData({ der: parsed.timestampTokens[0]! });
      assert.deepEqual(
        token.certificates.map(hex).sort(),
        [tsa.certificate, ...tsa.chain].map(hex).sort(),
        round,
      );
      assert.deepEqual(Buffer.from(token.content!), Buffer.from(content), round);
    }
    // A TBSCertificate longer than its certificate: asn1js refuses it, and with it the whole CMS.
    const broken = (bytes: Uint8Array, certificate: Uint8Array): Uint8Array => {
      const copy = new Uint8Array(bytes);
      const at = Buffer.from(copy).indexOf(Buffer.from(certificate));
      assert.ok(
        at > 0 && copy[at + 4] === 0x30 && copy[at + 5] === 0x82,
        'a TBSCertificate with a two-byte length',
      );
      copy[at + 6] = 0xff;
      return copy;
    };
    assert.throws(() => readSignedData({ der: broken(cms, signer.certificate) }), /CMS is not valid DER/);
    assert.throws(() => readSignedData({ der: broken(cms, tsa.certificate) }), /CMS is not valid DER/);
  });

  it('verifySignatureValue refuses a signature by another key, and converts ECDSA r||s to DER', async () => {
    const ec = await pki.signer({ name: 'EC', key: 'ECDSA' });
    const other = await pki.signer({ name: 'Other', key: 'ECDSA' });
    const data = new Uint8Array([1, 2, 3]);
    const raw = sign('sha256', data, { key: ec.privateKey, dsaEncoding: 'ieee-p1363' });
    const der = verifySignatureValue({
      certificate: ec.certificate,
      data,
      signature: raw,
      digestAlgorithm: 'SHA-256',
    });
    assert.equal(der[0], 0x30, 'DER SEQUENCE');
    const foreign = await other.sign({ data, digestAlgorithm: 'SHA-256' });
    assert.throws(
      () =>
        verifySignatureValue({
          certificate: ec.certificate,
          data,
          signature: foreign,
          digestAlgorithm: 'SHA-256',
        }),
      SignatureValueInvalid,
    );
  });
});

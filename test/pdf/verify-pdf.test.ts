import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { annotatePageOne } from '../helpers/after-signing.js';
import { addValidationData } from '../../src/pdf/add-validation-data.js';
import { signPdf } from '../../src/pdf/sign-pdf.js';
import { readPdf } from '../../src/pdf/appendable-pdf.js';
import { openPdf } from '../../src/pdf/open-pdf.js';
import { LazyPdf } from '../../src/pdf/reader/lazy-pdf.js';
import { verifyPdf } from '../../src/pdf/verify-pdf.js';
import { issueCrl } from '../../src/pki/issue-certificate.js';
import { certificateFields } from '../../src/pki/certificate-fields.js';
import type { Signer } from '../../src/pki/signers/signer.js';
import { onePagePdf } from '../fixtures/pdf-fixtures.js';
import { createTestPki, type TestPki } from '../fixtures/test-pki.js';
import { startTestTsa, type TestTsa } from '../fixtures/tsa-server.js';
import { hasTool, pdfsig, workspace, type Workspace } from './oracles.js';

describe('verification', () => {
  let pki: TestPki;
  let alice: Signer;
  let bob: Signer;
  let signed: Uint8Array;
  let space: Workspace;
  let tsa: TestTsa;

  before(async () => {
    pki = await createTestPki();
    alice = await pki.signer({ name: 'Alice' });
    bob = await pki.signer({ name: 'Bob', key: 'ECDSA' });
    space = await workspace();
    tsa = await startTestTsa(await pki.tsa());
    // Each signer's status as a signing service checks it before signing (issue 38), in its CMS.
    const signerStatus = await pki.status();
    const first = await signPdf({
      pdf: onePagePdf().bytes,
      signer: alice,
      signerName: 'Alice A.',
      signerStatus,
    });
    signed = (
      await signPdf({ pdf: first.pdf, signer: bob, level: 'B-T', tsa: { url: tsa.url }, signerStatus })
    ).pdf;
  });
  after(async () => {
    await tsa.close();
    await space.remove();
  });

  it('one flipped byte inside a signed range makes our verifier and pdfsig report failure', async () => {
    const { signatures } = await verifyPdf({ pdf: signed, trustAnchors: [pki.root.certificate] });
    // A digit of the page's /MediaBox, in the first range of the first signature: the file still reads.
    const mediaBox = Buffer.from(signed).indexOf('/MediaBox');
    const offset = Buffer.from(signed).findIndex((byte, at) => at > mediaBox && byte >= 0x31 && byte <= 0x39);
    assert.ok(mediaBox > 0 && offset < signatures[0]!.byteRange[1]!);
    const tampered = new Uint8Array(signed);
    tampered[offset] = tampered[offset]! ^ 0x01;
    const result = await verifyPdf({ pdf: tampered, trustAnchors: [pki.root.certificate] });
    for (const check of result.signatures) {
      assert.equal(check.digestValid, false, check.fieldName);
      assert.equal(check.indication, 'TOTAL_FAILED', check.fieldName);
      assert.equal(check.subIndication, 'HASH_FAILURE');
    }
    if (hasTool('pdfsig')) {
      const verdicts = await pdfsig(await space.write('tampered.pdf', tampered));
      assert.equal(verdicts.length, 2);
      for (const verdict of verdicts) assert.notEqual(verdict.validation, 'Signature is Valid.', verdict.raw);
      for (const verdict of verdicts) assert.match(verdict.validation, /Invalid|Mismatch/i);
    }
  });

  it('reports signer, /Name, claimed time, byte range, revisions after, chain and level', async () => {
    const { signatures } = await verifyPdf({ pdf: signed, trustAnchors: [pki.root.certificate] });
    const [first, second] = signatures;
    assert.equal(first!.signer!.commonName, 'Alice');
    assert.equal(first!.signerName, 'Alice A.');
    assert.equal(first!.revisionsAfter, 1);
    assert.equal(first!.coversWholeFile, false);
    assert.equal(second!.revisionsAfter, 0);
    assert.equal(second!.coversWholeFile, true);
    assert.equal(second!.byteRange[2]! + second!.byteRange[3]!, signed.length);
    assert.deepEqual(first!.certificate.chain, [
      'CN=Alice, O=Signery Tests',
      'CN=Signery Test Intermediate, O=Signery Tests',
      'CN=Signery Test Root, O=Signery Tests',
    ]);
    assert.deepEqual([first!.level, second!.level], ['B-B', 'B-T']);
    assert.ok(Math.abs(Date.parse(first!.claimedSigningTime!) - Date.now()) < 120_000);
  });

  it('without trust anchors the signatures are intact but INDETERMINATE (no chain to a trusted root)', async () => {
    const { signatures } = await verifyPdf({ pdf: signed });
    for (const check of signatures) {
      assert.ok(check.digestValid && check.signatureValid);
      assert.equal(check.indication, 'INDETERMINATE');
      assert.equal(check.subIndication, 'NO_CERTIFICATE_CHAIN_FOUND');
    }
  });

  it('a certificate revoked in a CRL fails the signature', async () => {
    const serial = Buffer.from(certificateFields(alice.certificate).serialNumber).toString('hex');
    const crl = await issueCrl({
      issuer: pki.intermediate,
      thisUpdate: new Date(),
      nextUpdate: new Date(Date.now() + 86_400_000),
      revoked: [{ serialNumber: serial, revocationDate: new Date(Date.now() - 60_000) }],
    });
    // signPdf refuses to embed a revocation as if good: the CRL is added as another tool would add it.
    const result = await signPdf({
      pdf: onePagePdf().bytes,
      signer: alice,
      level: 'B-T',
      tsa: { url: tsa.url },
    });
    const pdf = await addValidationData({
      pdf: result.pdf,
      certificates: [alice.certificate, ...alice.chain],
      crls: [crl],
    });
    const [check] = (await verifyPdf({ pdf, trustAnchors: [pki.root.certificate] })).signatures;
    assert.equal(check!.certificate.revocation, 'revoked');
    assert.equal(check!.indication, 'TOTAL_FAILED');
    assert.equal(check!.subIndication, 'REVOKED');
  });

  it('reads the file lazily and reports exactly what the full parse reports: signatures, levels, revocation from the DSS, reports', async () => {
    const crl = await issueCrl({
      issuer: pki.intermediate,
      thisUpdate: new Date(),
      nextUpdate: new Date(Date.now() + 86_400_000),
      revoked: [],
    });
    const withDss = await addValidationData({
      pdf: signed,
      certificates: [alice.certificate, ...alice.chain, bob.certificate, ...bob.chain],
      crls: [crl],
    });
    const validationTime = new Date();
    for (const pdf of [signed, withDss]) {
      assert.equal(await readPdf(pdf, (opened) => opened instanceof LazyPdf), true, 'read lazily');
      const options = { trustAnchors: [pki.root.certificate], validationTime, dss: true };
      const lazily = await verifyPdf({ pdf, ...options });
      const whole = await verifyPdf({ pdf: await openPdf({ bytes: pdf }), ...options });
      assert.deepEqual(lazily, whole);
      assert.equal(lazily.signatures.length, 2);
    }
  });

  it('annotating after signing keeps the signature valid (an incremental update)', async () => {
    const annotated = await annotatePageOne(signed, 'Filed', {
      percentX: 0.7,
      percentY: 0.05,
      percentWidth: 0.2,
      percentHeight: 0.04,
    });
    const { signatures } = await verifyPdf({ pdf: annotated, trustAnchors: [pki.root.certificate] });
    assert.deepEqual(
      signatures.map((s) => [s.indication, s.revisionsAfter]),
      [
        ['TOTAL_PASSED', 2],
        ['TOTAL_PASSED', 1],
      ],
    );
  });

  it('dss: true adds four well-formed XML reports with ETSI TS 119 102-2 indications (spec: Versioning 4)', async () => {
    const { dss } = await verifyPdf({
      pdf: signed,
      trustAnchors: [pki.root.certificate],
      dss: true,
      documentName: 'a&b.pdf',
    });
    assert.ok(dss);
    for (const xml of Object.values(dss)) assertWellFormed(xml);
    assert.match(
      dss.validationReport,
      /<vr:ValidationReport xmlns:vr="http:\/\/uri\.etsi\.org\/19102\/v1\.2\.1#"/,
    );
    assert.equal(dss.validationReport.match(/<vr:SignatureValidationReport>/g)?.length, 2);
    assert.equal(dss.validationReport.match(/urn:etsi:019102:mainindication:total-passed/g)?.length, 2);
    assert.match(dss.simpleReport, /<ValidSignaturesCount>2<\/ValidSignaturesCount>/);
    assert.match(dss.simpleReport, /<DocumentName>a&amp;b\.pdf<\/DocumentName>/);
    assert.match(dss.simpleReport, /SignatureFormat="PAdES-BASELINE-T"/);
    assert.match(dss.detailedReport, /<Status>OK<\/Status>/);
    assert.match(dss.diagnosticData, /<SignerName>Alice A\.<\/SignerName>/);
    const { dss: without } = await verifyPdf({ pdf: signed });
    assert.equal(without, undefined);
  });
});

/** A small XML well-formedness check: one root, tags balanced, attributes quoted, entities known. */
function assertWellFormed(xml: string): void {
  assert.ok(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n'));
  const body = xml.slice(xml.indexOf('\n') + 1);
  const stack: string[] = [];
  let roots = 0;
  const tag = /<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/g;
  let consumed = 0;
  for (let m = tag.exec(body); m; m = tag.exec(body)) {
    assert.equal(
      m.index,
      consumed,
      `unexpected markup at ${consumed}: ${body.slice(consumed, consumed + 40)}`,
    );
    consumed = m.index + m[0].length;
    if (m[5] !== undefined) {
      assert.ok(stack.length > 0, 'text outside the root');
      assert.doesNotMatch(m[5], /&(?!(amp|lt|gt|quot|apos);)/, 'unknown entity');
      continue;
    }
    const [, closing, name, , selfClosing] = m;
    if (closing) assert.equal(stack.pop(), name);
    else if (!selfClosing) {
      if (stack.length === 0) roots++;
      stack.push(name!);
    } else if (stack.length === 0) roots++;
  }
  assert.equal(consumed, body.length, 'the document ends in the middle of markup');
  assert.deepEqual(stack, []);
  assert.equal(roots, 1);
}

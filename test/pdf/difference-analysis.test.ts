import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { addValidationData } from '../../src/pdf/add-validation-data.js';
import { signPdf } from '../../src/pdf/sign-pdf.js';
import { documentVerdict } from '../../src/pdf/verdict.js';
import { verifyPdf } from '../../src/pdf/verify-pdf.js';
import { issueCrl } from '../../src/pki/issue-certificate.js';
import type { Signer } from '../../src/pki/signers/signer.js';
import { onePagePdf } from '../fixtures/pdf-fixtures.js';
import { annotatePageOne, replacePageContent, tamperPadding } from '../helpers/after-signing.js';
import { createTestPki, type TestPki } from '../fixtures/test-pki.js';

describe('difference analysis: every revision after each signature, one verdict', () => {
  let pki: TestPki;
  let alice: Signer;
  let bob: Signer;
  let trustAnchors: Uint8Array[];
  let signedTwice: Uint8Array;

  before(async () => {
    pki = await createTestPki();
    alice = await pki.signer({ name: 'Alice' });
    bob = await pki.signer({ name: 'Bob' });
    trustAnchors = [pki.root.certificate];
    const first = await signPdf({ pdf: onePagePdf().bytes, signer: alice, signerStatus: await pki.status() });
    signedTwice = (await signPdf({ pdf: first.pdf, signer: bob, signerStatus: await pki.status() })).pdf;
  });

  it('a later signature with its field, widget and appearance is allowed: both signatures valid', async () => {
    const withVisual = await signPdf({
      pdf: (await signPdf({ pdf: onePagePdf().bytes, signer: alice, signerStatus: await pki.status() })).pdf,
      signer: bob,
      signerStatus: await pki.status(),
      signatures: [
        {
          type: 'signature',
          pages: [1],
          position: { percentX: 0.52, percentY: 0.7, percentWidth: 0.2, percentHeight: 0.06 },
        },
      ],
    });
    const verification = await verifyPdf({ pdf: withVisual.pdf, trustAnchors });
    const [first] = verification.signatures;
    assert.deepEqual(
      first!.modifications.map((m) => m.kind),
      ['signature'],
      JSON.stringify(first!.modifications),
    );
    assert.deepEqual(
      verification.signatures.map((s) => s.verdict),
      ['valid', 'valid'],
    );
    assert.equal(documentVerdict(verification).headline, 'valid');
  });

  it('reproduction 1: page content replaced, then signed again: changed, naming the first signature', async () => {
    const attacked = await replacePageContent(signedTwice, 'The buyer pays EUR 10.00');
    const alone = await verifyPdf({ pdf: attacked, trustAnchors });
    assert.equal(documentVerdict(alone).headline, 'changed');
    const resigned = (await signPdf({ pdf: attacked, signer: bob, signerStatus: await pki.status() })).pdf;
    const verification = await verifyPdf({ pdf: resigned, trustAnchors });
    const verdict = documentVerdict(verification);
    assert.equal(verdict.headline, 'changed');
    assert.equal(verdict.signature, verification.signatures[0]!.fieldName);
    const content = verification.signatures[0]!.modifications.find((m) => m.kind === 'other');
    assert.ok(content, JSON.stringify(verification.signatures[0]!.modifications));
    assert.deepEqual(content.pages, [1]);
    assert.equal(content.description, "Page 1's content was replaced");
    assert.equal(content.revision, 2);
    assert.deepEqual(
      verification.signatures.map((s) => s.verdict),
      ['changed', 'changed', 'valid'],
    );
  });

  it('reproduction 2: an opaque annotation over signed text is changed, one in an empty margin is not', async () => {
    const over = await annotatePageOne(
      signedTwice,
      'The buyer pays EUR 100,000.00 on signature.',
      { percentX: 0.1, percentY: 0.07, percentWidth: 0.6, percentHeight: 0.04 },
      { backgroundColor: '#FFFFFFFF' },
    );
    const verification = await verifyPdf({ pdf: over, trustAnchors });
    const annotation = verification.signatures[0]!.modifications.find((m) => m.kind === 'annotation');
    assert.ok(annotation, JSON.stringify(verification.signatures[0]!.modifications));
    assert.equal(annotation.coversSignedContent, true);
    assert.deepEqual(annotation.pages, [1]);
    assert.equal(annotation.rect!.length, 4);
    assert.equal(documentVerdict(verification).headline, 'changed');

    const margin = await annotatePageOne(signedTwice, 'Filed', {
      percentX: 0.8,
      percentY: 0.4,
      percentWidth: 0.1,
      percentHeight: 0.03,
    });
    const clean = await verifyPdf({ pdf: margin, trustAnchors });
    const note = clean.signatures[0]!.modifications.find((m) => m.kind === 'annotation');
    assert.equal(note?.coversSignedContent, false, JSON.stringify(clean.signatures[0]!.modifications));
    assert.equal(documentVerdict(clean).headline, 'valid');
  });

  it('reproduction 3: 12 hex digits changed in the /Contents padding make the signature invalid', async () => {
    const verification = await verifyPdf({ pdf: signedTwice, trustAnchors });
    const last = verification.signatures.at(-1)!;
    const tampered = tamperPadding(signedTwice, last.byteRange[2]!);
    const after = await verifyPdf({ pdf: tampered, trustAnchors });
    assert.equal(after.signatures.at(-1)!.verdict, 'invalid');
    const verdict = documentVerdict(after);
    assert.equal(verdict.headline, 'invalid');
    assert.equal(verdict.signature, last.fieldName);
    assert.match(verdict.reason, /unused room of its \/Contents/);
  });

  it('reproduction 6: a DSS-only revision after a signature is validation data, never a change', async () => {
    const now = new Date();
    const crl = await issueCrl({
      issuer: pki.intermediate,
      thisUpdate: now,
      nextUpdate: new Date(now.getTime() + 86_400_000),
    });
    const withDss = await addValidationData({
      pdf: signedTwice,
      certificates: [pki.intermediate.certificate],
      crls: [crl],
    });
    const verification = await verifyPdf({ pdf: withDss, trustAnchors });
    for (const check of verification.signatures) {
      assert.deepEqual(
        check.modifications.filter((m) => m.kind !== 'signature').map((m) => m.kind),
        ['validation-data'],
      );
      assert.equal(check.verdict, 'valid');
    }
    assert.equal(documentVerdict(verification).headline, 'valid');
  });

  it('no signature: unsigned; an untrusted signer: unconfirmed', async () => {
    assert.equal(documentVerdict(await verifyPdf({ pdf: onePagePdf().bytes })).headline, 'unsigned');
    const untrusted = await verifyPdf({ pdf: signedTwice });
    assert.deepEqual(
      untrusted.signatures.map((s) => s.verdict),
      ['indeterminate', 'indeterminate'],
    );
    assert.equal(documentVerdict(untrusted).headline, 'unconfirmed');
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signPdf } from '../../src/pdf/sign-pdf.js';
import { verifyPdf } from '../../src/pdf/verify-pdf.js';
import { issueCrl } from '../../src/pki/issue-certificate.js';
import { pem } from '../../src/pki/dev-ca.js';
import { certificateFields } from '../../src/pki/certificate-fields.js';
import { CertificateRevoked, RevocationUnavailable, TimestampUnavailable } from '../../src/pki/errors.js';
import type { Signer } from '../../src/pki/signers/signer.js';
import { onePagePdf } from '../fixtures/pdf-fixtures.js';
import { createTestPki, type TestPki } from '../fixtures/test-pki.js';
import { startTestTsa, type TestTsa } from '../fixtures/tsa-server.js';
import {
  extractSignatures,
  hasTool,
  opensslVerifies,
  pdfsig,
  tool,
  workspace,
  type Workspace,
} from './oracles.js';

describe('PAdES levels with a real RFC 3161 TSA on loopback', () => {
  let pki: TestPki;
  let signer: Signer;
  let tsa: TestTsa;
  let space: Workspace;
  let crls: Uint8Array[];
  let trustAnchors: Uint8Array[];

  before(async () => {
    pki = await createTestPki();
    signer = await pki.signer({ name: 'Timestamped Signer' });
    tsa = await startTestTsa(await pki.tsa());
    space = await workspace();
    trustAnchors = [pki.root.certificate];
    // Real revocation data: CRLs signed by the root (for the intermediate and TSA) and by the intermediate.
    const now = new Date();
    const nextUpdate = new Date(now.getTime() + 7 * 86_400_000);
    crls = [
      await issueCrl({ issuer: pki.root, thisUpdate: now, nextUpdate }),
      await issueCrl({ issuer: pki.intermediate, thisUpdate: now, nextUpdate }),
    ];
  });
  after(async () => {
    await tsa.close();
    await space.remove();
  });

  it('B-T: the CMS carries a signature timestamp from the TSA and every oracle accepts it', async () => {
    const result = await signPdf({
      pdf: onePagePdf().bytes,
      signer,
      level: 'B-T',
      tsa: { url: tsa.url },
      signerStatus: await pki.status(),
    });
    assert.deepEqual([result.levelAchieved, result.fellBack], ['B-T', false]);
    const [check] = (await verifyPdf({ pdf: result.pdf, trustAnchors })).signatures;
    assert.equal(check!.level, 'B-T');
    assert.ok(check!.timestamp?.valid && check!.timestamp.coversData, JSON.stringify(check!.timestamp));
    assert.equal(check!.timestamp.tsa, 'Signery Test TSA');
    assert.equal(check!.indication, 'TOTAL_PASSED');
    if (hasTool('pdfsig')) {
      const [verdict] = await pdfsig(await space.write('bt.pdf', result.pdf));
      assert.equal(verdict!.validation, 'Signature is Valid.');
    }
    if (hasTool('openssl')) {
      const caFile = await space.write(
        'ca.pem',
        [pki.root.certificate, pki.intermediate.certificate].map((c) => pem('CERTIFICATE', c)).join(''),
      );
      const [extracted] = await extractSignatures(space, result.pdf, 'bt');
      assert.ok(await opensslVerifies(extracted!, caFile));
    }
  });

  it('B-LT: a DSS revision after the signature holds the chain, the TSA certificate and the CRLs', async () => {
    const result = await signPdf({
      pdf: onePagePdf().bytes,
      signer,
      level: 'B-LT',
      tsa: { url: tsa.url },
      validationData: { crls },
    });
    assert.equal(result.levelAchieved, 'B-LT');
    assert.deepEqual(result.warnings, []);
    const { signatures } = await verifyPdf({ pdf: result.pdf, trustAnchors });
    assert.equal(signatures.length, 1);
    assert.equal(signatures[0]!.level, 'B-LT');
    assert.equal(signatures[0]!.revisionsAfter, 1, 'the DSS is its own incremental update');
    assert.equal(signatures[0]!.certificate.revocation, 'good');
    assert.deepEqual(signatures[0]!.certificate.revocationSources, ['crl']);
    if (hasTool('qpdf')) {
      const out = await tool('qpdf', ['--check', await space.write('blt.pdf', result.pdf)]);
      assert.match(out, /No syntax or stream encoding errors found/);
    }
  });

  it('B-LT is claimed only with its evidence: without revocation data it fails, or falls back to B-T and says so', async () => {
    await assert.rejects(
      signPdf({ pdf: onePagePdf().bytes, signer, level: 'B-LT', tsa: { url: tsa.url } }),
      RevocationUnavailable,
    );
    // A CRL for the signer's chain only: the TSA's certificate stays unproved.
    const partial = await signPdf({
      pdf: onePagePdf().bytes,
      signer,
      level: 'B-LTA',
      tsa: { url: tsa.url },
      onTimestampFailure: 'fallback',
      validationData: { crls: [crls[1]!] },
    });
    assert.deepEqual([partial.levelAchieved, partial.fellBack], ['B-T', true]);
    assert.match(partial.reason ?? '', /No revocation data for/);
    const [check] = (await verifyPdf({ pdf: partial.pdf, trustAnchors })).signatures;
    assert.equal(check!.level, 'B-T');
    assert.equal(check!.revisionsAfter, 0, 'no DSS was added');
  });

  it('a revoked certificate is never embedded as if good: the call fails', async () => {
    const revoked = await pki.signer({ name: 'Revoked Signer' });
    const now = new Date();
    const crl = await issueCrl({
      issuer: pki.intermediate,
      thisUpdate: now,
      nextUpdate: new Date(now.getTime() + 86_400_000),
      revoked: [
        {
          serialNumber: Buffer.from(certificateFields(revoked.certificate).serialNumber).toString('hex'),
          revocationDate: new Date(now.getTime() - 60_000),
        },
      ],
    });
    await assert.rejects(
      signPdf({
        pdf: onePagePdf().bytes,
        signer: revoked,
        level: 'B-LT',
        tsa: { url: tsa.url },
        onTimestampFailure: 'fallback',
        validationData: { crls: [crls[0]!, crl] },
      }),
      CertificateRevoked,
    );
  });

  it('B-LTA: a document timestamp (ETSI.RFC3161) after the DSS covers the whole file', async () => {
    const result = await signPdf({
      pdf: onePagePdf().bytes,
      signer,
      level: 'B-LTA',
      tsa: { url: tsa.url },
      validationData: { crls },
    });
    assert.equal(result.levelAchieved, 'B-LTA');
    const { signatures } = await verifyPdf({ pdf: result.pdf, trustAnchors });
    assert.deepEqual(
      signatures.map((s) => [s.kind, s.subFilter, s.level, s.coversWholeFile, s.indication]),
      [
        ['signature', 'ETSI.CAdES.detached', 'B-LTA', false, 'TOTAL_PASSED'],
        ['document-timestamp', 'ETSI.RFC3161', undefined, true, 'TOTAL_PASSED'],
      ],
    );
    if (hasTool('pdfsig')) {
      const verdicts = await pdfsig(await space.write('blta.pdf', result.pdf));
      assert.equal(verdicts[0]!.validation, 'Signature is Valid.');
    }
    if (hasTool('openssl')) {
      // pdfsig 22 cannot check ETSI.RFC3161; `openssl ts -verify` checks the token over the byte ranges.
      const caFile = await space.write('root.pem', pem('CERTIFICATE', pki.root.certificate));
      const extracted = await extractSignatures(space, result.pdf, 'blta');
      const docTs = extracted.find((e) => e.type === 'DocTimeStamp')!;
      const out = await tool('openssl', [
        'ts',
        '-verify',
        '-data',
        docTs.content,
        '-in',
        docTs.cms,
        '-token_in',
        '-CAfile',
        caFile,
      ]);
      assert.match(out, /Verification: OK/, out);
    }
  });

  it('a failing TSA with fallback: signed at B-B, fellBack reported, and no timestamp anywhere (never faked)', async () => {
    for (const mode of ['http-error', 'rejection', 'garbage', 'wrong-imprint', 'wrong-nonce'] as const) {
      tsa.setMode(mode);
      try {
        const result = await signPdf({
          pdf: onePagePdf().bytes,
          signer,
          level: 'B-T',
          tsa: { url: tsa.url },
          onTimestampFailure: 'fallback',
        });
        assert.deepEqual([result.levelAchieved, result.fellBack], ['B-B', true], mode);
        assert.ok(result.reason && result.reason.length > 0, mode);
        const [check] = (await verifyPdf({ pdf: result.pdf, trustAnchors })).signatures;
        assert.equal(check!.timestamp, undefined, mode);
        assert.equal(check!.evidence.cms!.timestampTokens.length, 0, mode);
        assert.equal(check!.level, 'B-B', mode);
      } finally {
        tsa.setMode('ok');
      }
    }
  });

  it('an unreachable TSA without fallback fails the operation with TimestampUnavailable', async () => {
    await assert.rejects(
      signPdf({
        pdf: onePagePdf().bytes,
        signer,
        level: 'B-T',
        tsa: { url: 'http://127.0.0.1:9/tsr', timeoutMs: 2000 },
      }),
      TimestampUnavailable,
    );
  });

  it('B-LTA whose document timestamp fails falls back to B-LT and says so', async () => {
    let calls = 0;
    const flaky = await startTestTsa(await pki.tsa({ name: 'Flaky TSA' }));
    try {
      const original = flaky.url;
      // The first request (signature timestamp) succeeds, the second (document timestamp) hits a dead port.
      const result = await signPdf({
        pdf: onePagePdf().bytes,
        signer,
        level: 'B-LTA',
        tsa: {
          get url() {
            calls++;
            return calls === 1 ? original : 'http://127.0.0.1:9/tsr';
          },
          timeoutMs: 2000,
        },
        onTimestampFailure: 'fallback',
        validationData: { crls },
      });
      assert.deepEqual([result.levelAchieved, result.fellBack], ['B-LT', true]);
      assert.match(result.reason ?? '', /cannot be reached/);
    } finally {
      await flaky.close();
    }
  });
});

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDevCa, pem, type DevCa } from '../../src/pki/dev-ca.js';
import { revocationUrls } from '../../src/pki/revocation-urls.js';
import { revocationStatus, validateCertificateChain } from '../../src/pki/validate-certificate-chain.js';
import { verifySignatureValue } from '../../src/pki/verify-signature-value.js';
import { hasTool, tool, workspace } from '../pdf/oracles.js';

describe('dev CA (DESIGN: generated under DATA_DIR/pki when none is configured)', () => {
  let dataDir: string;
  let ca: DevCa;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'signery-devca-'));
    ca = await openDevCa({ dir: join(dataDir, 'pki'), organisation: 'Acme' });
  });
  after(() => rm(dataDir, { recursive: true, force: true }));

  it('creates a root CA and a seal certificate on first use, with keys readable by the owner only', async () => {
    for (const name of ['root-ca.key', 'seal.key']) {
      const { mode } = await stat(join(dataDir, 'pki', name));
      assert.equal(mode & 0o777, 0o600, name);
    }
    const root = new X509Certificate(ca.rootCertificate);
    const seal = new X509Certificate(ca.sealCertificate);
    assert.ok(root.ca);
    assert.ok(seal.checkIssued(root) && seal.verify(root.publicKey));
    assert.match(seal.subject, /CN=Acme seal/);
  });

  it('reuses the same CA afterwards, also when two processes open it at once', async () => {
    const again = await openDevCa({ dir: join(dataDir, 'pki') });
    assert.ok(Buffer.from(again.sealCertificate).equals(Buffer.from(ca.sealCertificate)));
    const fresh = join(dataDir, 'race');
    const [a, b] = await Promise.all([openDevCa({ dir: fresh }), openDevCa({ dir: fresh })]);
    assert.ok(Buffer.from(a.rootCertificate).equals(Buffer.from(b.rootCertificate)));
    assert.ok(
      Buffer.from(a.rootCertificate).equals(
        Buffer.from(await openDevCa({ dir: fresh }).then((c) => c.rootCertificate)),
      ),
    );
  });

  it('the seal signer signs with the seal key; its CRL is real revocation data for the chain', async () => {
    const data = new Uint8Array([1, 2, 3]);
    const signature = await ca.sealSigner.sign({ data, digestAlgorithm: 'SHA-256' });
    verifySignatureValue({ certificate: ca.sealCertificate, data, signature, digestAlgorithm: 'SHA-256' });
    const crl = await ca.issueCrl();
    const result = await validateCertificateChain({
      certificate: ca.sealCertificate,
      intermediates: ca.sealSigner.chain,
      trustAnchors: [ca.rootCertificate],
      at: new Date(),
      crls: [crl],
    });
    assert.deepEqual([result.trusted, result.revocation], [true, 'good']);
    if (hasTool('openssl')) {
      const space = await workspace();
      try {
        const out = await tool('openssl', [
          'crl',
          '-inform',
          'DER',
          '-in',
          await space.write('ca.crl', crl),
          '-CAfile',
          await space.write('root.pem', pem('CERTIFICATE', ca.rootCertificate)),
          '-noout',
        ]);
        assert.match(out, /verify OK/, out);
      } finally {
        await space.remove();
      }
    }
    assert.match(await readFile(join(dataDir, 'pki', 'seal.pem'), 'utf8'), /BEGIN CERTIFICATE/);
  });

  it('a dev CA made before its revocation addresses gets its seal reissued under the same root and key, naming the CRL and OCSP under PUBLIC_URL; old seals stay trusted', async () => {
    const before = ca.sealCertificate;
    const reopened = await openDevCa({ dir: join(dataDir, 'pki'), publicUrl: 'https://sign.example.test' });
    assert.deepEqual(revocationUrls(before), { ocsp: [], crl: [] }, 'made without addresses');
    assert.deepEqual(revocationUrls(reopened.sealCertificate), {
      ocsp: ['https://sign.example.test/pki/ocsp'],
      crl: ['https://sign.example.test/pki/dev-ca.crl'],
    });
    assert.deepEqual(reopened.rootCertificate, ca.rootCertificate, 'the same root');
    const old = new X509Certificate(before);
    const next = new X509Certificate(reopened.sealCertificate);
    assert.equal(next.subject, old.subject);
    assert.ok(next.publicKey.equals(old.publicKey), 'the same seal key');
    const root = new X509Certificate(ca.rootCertificate);
    assert.ok(old.verify(root.publicKey) && next.verify(root.publicKey));
    const again = await openDevCa({ dir: join(dataDir, 'pki'), publicUrl: 'https://sign.example.test' });
    assert.deepEqual(again.sealCertificate, reopened.sealCertificate, 'reissued once, then kept');
    // Its responder vouches for the new seal, signed with the root (openssl ocsp checks it too).
    const answer = await reopened.ocsp(reopened.sealCertificate, reopened.rootCertificate, new Date());
    const status = await revocationStatus({
      certificate: reopened.sealCertificate,
      issuer: reopened.rootCertificate,
      ocsps: [answer!],
      at: new Date(),
    });
    assert.deepEqual(status, { status: 'good', source: 'ocsp' });
  });
});

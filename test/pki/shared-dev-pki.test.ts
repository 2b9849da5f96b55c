import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDevCa, pem } from '../../src/pki/dev-ca.js';
import { revocationUrls } from '../../src/pki/revocation-urls.js';
import { makePdf } from '../helpers/pdf.js';
import { startS3rver, type RunningS3 } from '../helpers/s3rver.js';
import { startServer, TEST_DATABASE_URL, upload, type TestServer } from '../helpers/server.js';

describe(
  'The development PKI is one per installation, kept in the database (Operations: nodes share it)',
  {
    skip: TEST_DATABASE_URL
      ? false
      : 'one SQLite file serves one node: there is no second node to agree with',
  },
  () => {
    let first: TestServer;
    let second: TestServer;
    let secondDir: string;
    let s3: RunningS3;
    before(async () => {
      // Nodes as an operator runs them: one database, one bucket, nothing shared on disk.
      s3 = await startS3rver();
      first = await startServer({ env: s3.env });
      secondDir = await mkdtemp(join(tmpdir(), 'signery-node-b-'));
      second = await startServer({ sameStoreAs: first, env: { ...s3.env, DATA_DIR: secondDir } });
    });
    after(async () => {
      await second?.close();
      await first?.close();
      await s3?.close();
      await rm(secondDir, { recursive: true, force: true });
    });

    it('a document sealed on one node verifies as trusted on another', async () => {
      const token = await first.adminToken();
      const pdf = await upload(first, token, makePdf({ pages: 1 }));
      const created = await first.api('POST', '/documents', {
        token,
        body: { body: { documentTitle: 'Sealed on A', pdfFile: { content: pdf } } },
      });
      assert.equal(created.status, 200, created.text);
      const id = created.body.results[0].documentId as string;
      const sealed = await first.api('PUT', '/documents/seal/1', { token, body: { id, certificate: true } });
      assert.equal(sealed.status, 200, sealed.text);
      for (const node of [first, second]) {
        const report = await node.api('GET', `/documents/${id}/verify`, { token });
        assert.equal(report.status, 200, report.text);
        const [signature] = report.body.signatures;
        assert.equal(signature.indication, 'TOTAL_PASSED', JSON.stringify(signature.certificate?.problems));
      }
    });
  },
);

describe(
  'An installation that made its dev CA under DATA_DIR/pki keeps it in the database (Operations: upgrades keep trust)',
  {
    skip: TEST_DATABASE_URL ? false : 'on SQLite the dev CA stays under DATA_DIR/pki',
  },
  () => {
    it('the CA found under DATA_DIR/pki becomes the installation’s, so earlier signatures still chain to its root', async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'signery-legacy-pki-'));
      const legacy = await openDevCa({ dir: join(dataDir, 'pki') });
      const server = await startServer({ env: { DATA_DIR: dataDir } });
      try {
        const token = await server.adminToken();
        const pdf = await upload(server, token, makePdf({ pages: 1 }));
        const created = await server.api('POST', '/documents', {
          token,
          body: { body: { documentTitle: 'Sealed after the upgrade', pdfFile: { content: pdf } } },
        });
        const id = created.body.results[0].documentId as string;
        assert.equal(
          (await server.api('PUT', '/documents/seal/1', { token, body: { id, certificate: true } })).status,
          200,
        );
        const row = await server.app.database.db.selectFrom('dev_pki').selectAll().executeTakeFirstOrThrow();
        assert.equal(row.root_certificate, pem('CERTIFICATE', legacy.rootCertificate));
        // Made before the revocation addresses: its seal is reissued under the same root and key (issue 23).
        const reissued = new X509Certificate(row.seal_certificate);
        const publicUrl = server.app.deps.config.publicUrl;
        assert.deepEqual(revocationUrls(new Uint8Array(reissued.raw)), {
          ocsp: [`${publicUrl}/pki/ocsp`],
          crl: [`${publicUrl}/pki/dev-ca.crl`],
        });
        assert.ok(reissued.publicKey.equals(new X509Certificate(legacy.sealCertificate).publicKey));
        assert.ok(reissued.verify(new X509Certificate(legacy.rootCertificate).publicKey));
      } finally {
        await server.close();
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  },
);

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { verifyPdf } from '../../src/pdf/verify-pdf.js';
import { pem } from '../../src/pki/dev-ca.js';
import { revocationUrls } from '../../src/pki/revocation-urls.js';
import { useOpensslPki } from '../fixtures/openssl-pki.js';
import { aDocument, mainFileOf, readDocument } from '../helpers/documents.js';
import { createUser, startServer, USER_PASSWORD, type TestServer } from '../helpers/server.js';
import { shareDocument } from '../helpers/sharing.js';
import {
  extractSignatures,
  hasTool,
  nssDatabase,
  opensslTsVerify,
  opensslVerifies,
  pdfsig,
  tool,
  useWorkspace,
  type Workspace,
} from '../pdf/oracles.js';

const LEVELS = ['B-B', 'B-T', 'B-LT', 'B-LTA'] as const;
const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.08 });

const newDocument = (server: TestServer, token: string) => aDocument(server, token, { title: 'Evidence' });

const seal = (server: TestServer, token: string, id: string, level: string, version = 1) =>
  server.api('PUT', `/documents/seal/${version}`, { token, body: { id, certificate: true, level } });

/** A new document sealed at `level`, reached without falling back: its id and its PDF. */
async function sealedAt(server: TestServer, token: string, level: string) {
  const id = await newDocument(server, token);
  const sealed = await seal(server, token, id, level);
  assert.equal(sealed.status, 200, sealed.text);
  assert.deepEqual([sealed.body.levelAchieved, sealed.body.fellBack], [level, false], sealed.text);
  return { id, pdf: await mainFileOf(server, token, id) };
}

/**
 * The oracles of DESIGN on one sealed file: pdfsig (trusting `root` through NSS), `mutool sign -v`,
 * `openssl cms -verify` of the signature, `openssl ts -verify` of a document timestamp.
 */
async function assertOraclesAccept(
  space: Workspace,
  pdf: Uint8Array,
  name: string,
  root: Uint8Array,
  caFile: string,
) {
  const path = await space.write(`${name}.pdf`, pdf);
  if (hasTool('pdfsig')) {
    const verdicts = await pdfsig(path, await trusting(space, root));
    assert.equal(verdicts[0]!.validation, 'Signature is Valid.', verdicts[0]!.raw);
  }
  if (hasTool('mutool')) {
    // mutool has no trust store: it checks the signature and that nothing changed after it.
    const out = await tool('mutool', ['sign', '-v', path]);
    assert.match(
      out,
      /The document is unchanged since signing|The signature is valid but there have been edits since signing/,
      out,
    );
    assert.doesNotMatch(out, /Digest (failure|mismatch)|Signature is invalid|modified/i, out);
  }
  if (hasTool('openssl')) {
    const extracted = await extractSignatures(space, pdf, name);
    const signature = extracted.find((e) => e.type !== 'DocTimeStamp')!;
    assert.ok(await opensslVerifies(signature, caFile), `openssl cms -verify (${name})`);
    const docTs = extracted.find((e) => e.type === 'DocTimeStamp');
    if (docTs) {
      const out = await opensslTsVerify(docTs, caFile);
      assert.match(out, /Verification: OK/, out);
    }
  }
}

const nssByRoot = new Map<string, Promise<string | undefined>>();
/** One NSS database per trusted root (pdfsig's trust store), made once. */
function trusting(space: Workspace, root: Uint8Array): Promise<string | undefined> {
  const key = Buffer.from(root).toString('base64');
  let made = nssByRoot.get(key);
  if (!made) {
    const sub = { ...space, dir: `${space.dir}/nss-${nssByRoot.size}` };
    made = tool('mkdir', ['-p', sub.dir]).then(() => nssDatabase(sub, root));
    nssByRoot.set(key, made);
  }
  return made;
}

describe('a PAdES level is reported only with its evidence in the file', () => {
  const pki = useOpensslPki();
  const space = useWorkspace();

  /**
   * A server sealing with the outside PKI's certificate (its environment changed by `env`), with one
   * of the PKI's services `down` meanwhile; closed after `use`.
   */
  async function withOutsideSeal(
    options: { env?: Record<string, string>; down?: 'ocsp' | 'tsa' },
    use: (server: TestServer, admin: string) => Promise<void>,
  ) {
    const server = await startServer({
      env: {
        SEAL_P12: pki.sealP12,
        SEAL_P12_PASSWORD: pki.p12Password,
        TSA_URL: pki.tsaUrl,
        REVOCATION_ALLOW_PRIVATE: 'true',
        ...options.env,
      },
    });
    if (options.down) await pki.set(options.down, false);
    try {
      await use(server, await server.adminToken());
    } finally {
      if (options.down) await pki.set(options.down, true);
      await server.close();
    }
  }

  it('with an outside PKI: a seal at each level; B-LT and B-LTA carry revocation data for every certificate of both chains, and verification proves the level claimed', async () => {
    await withOutsideSeal({}, async (server, admin) => {
      for (const level of LEVELS) {
        const { id, pdf } = await sealedAt(server, admin, level);
        const { signatures, securityStore } = await verifyPdf({ pdf, trustAnchors: [pki.certificates.root] });
        assert.equal(signatures[0]!.level, level);
        assert.equal(signatures[0]!.indication, 'TOTAL_PASSED', JSON.stringify(signatures[0]!.problems));
        if (level === 'B-LT' || level === 'B-LTA') {
          // Seal and TSA by OCSP (their AIA), the intermediate by the root's CRL (its CDP).
          assert.equal(securityStore!.ocsps.length, 2, 'an OCSP response for the seal and one for the TSA');
          assert.equal(securityStore!.crls.length, 1, 'the root CRL for the intermediate');
          for (const der of Object.values(pki.certificates).filter(
            (c) => c !== pki.certificates.revokedSeal,
          )) {
            assert.ok(securityStore!.certificates.some((c) => Buffer.compare(c, der) === 0));
          }
          assert.equal(signatures[0]!.certificate.revocation, 'good');
          assert.deepEqual(signatures[0]!.certificate.revocationSources.sort(), ['crl', 'ocsp']);
          assert.equal(signatures[0]!.timestamp?.revocation, 'good', 'the TSA chain too');
        }
        const report = await server.api('GET', `/documents/${id}/verify`, { token: admin });
        assert.equal(report.body.signatures[0].level, level, 'GET /documents/:id/verify says the same');
        await assertOraclesAccept(space, pdf, `outside-${level}`, pki.certificates.root, pki.caFile);
      }
      // The fetches are in the metrics (docs/operations.md: Metrics and alerts), none failed.
      const metrics = (await server.api('GET', '//metrics')).text;
      assert.match(
        metrics,
        /signery_revocation_request_duration_seconds_count\{kind="ocsp",outcome="success"\} [1-9]/,
      );
      assert.match(
        metrics,
        /signery_revocation_request_duration_seconds_count\{kind="crl",outcome="success"\} [1-9]/,
      );
      assert.doesNotMatch(metrics, /signery_revocation_failures_total\{/);
    });
  });

  it('the OCSP responder down: B-LT falls back to B-T and says so (the TSA certificate names only OCSP)', async () => {
    await withOutsideSeal({ down: 'ocsp' }, async (server, admin) => {
      for (const level of ['B-LT', 'B-LTA']) {
        const id = await newDocument(server, admin);
        const sealed = await seal(server, admin, id, level);
        assert.equal(sealed.status, 200, sealed.text);
        assert.deepEqual([sealed.body.levelAchieved, sealed.body.fellBack], ['B-T', true]);
        assert.match(sealed.body.reason, /No revocation data for Outside TSA/);
        const { signatures, securityStore } = await verifyPdf({
          pdf: await mainFileOf(server, admin, id),
          trustAnchors: [pki.certificates.root],
        });
        assert.equal(signatures[0]!.level, 'B-T');
        assert.equal(securityStore, undefined, 'no DSS claims what is not there');
      }
      const metrics = (await server.api('GET', '//metrics')).text;
      assert.match(
        metrics,
        /signery_revocation_failures_total\{kind="ocsp"\} [1-9]/,
        'the failures are counted',
      );
    });
  });

  it('the TSA down: B-LTA falls back to B-B, with no timestamp and no DSS (never faked)', async () => {
    await withOutsideSeal({ down: 'tsa' }, async (server, admin) => {
      const id = await newDocument(server, admin);
      const sealed = await seal(server, admin, id, 'B-LTA');
      assert.equal(sealed.status, 200, sealed.text);
      assert.deepEqual([sealed.body.levelAchieved, sealed.body.fellBack], ['B-B', true]);
      const { signatures, securityStore } = await verifyPdf({ pdf: await mainFileOf(server, admin, id) });
      assert.equal(signatures[0]!.level, 'B-B');
      assert.equal(securityStore, undefined);
    });
  });

  it('a revoked seal certificate: a B-LT seal fails with SEAL_CERTIFICATE_REVOKED (checked before signing, issue 38) and the document is unchanged', async () => {
    await withOutsideSeal({ env: { SEAL_P12: pki.revokedSealP12 } }, async (server, admin) => {
      const id = await newDocument(server, admin);
      const sealed = await seal(server, admin, id, 'B-LT');
      assert.equal(sealed.status, 503, sealed.text);
      assert.equal(sealed.body.code, 'SEAL_CERTIFICATE_REVOKED');
      assert.match(sealed.body.message, /Outside Revoked Seal is revoked/);
      const doc = (await server.api('GET', `/documents/${id}`, { token: admin })).body.results[0];
      assert.deepEqual([doc._version, doc.isSigned], [1, false]);
    });
  });

  it('a revoked seal certificate refuses a signer’s signature too (the organisation key makes it, issue 38): 503 SEAL_CERTIFICATE_REVOKED, nothing committed, no seal queued', async () => {
    await withOutsideSeal({ env: { SEAL_P12: pki.revokedSealP12 } }, async (server, admin) => {
      await createUser(server, { name: 'signer', email: 'signer@example.test' });
      const id = await newDocument(server, admin);
      await shareDocument(server, admin, id, { to: 'signer' });
      const signer = await server.login('signer', USER_PASSWORD);
      const { _version: version } = await readDocument(server, admin, id);
      // Before issue 38 a B-B signature was made with the revoked key, as it proves nothing about revocation.
      const signed = await server.api('PUT', `/documents/sign/${version}`, {
        token: signer,
        body: { id, level: 'B-B', signatures: [{ type: 'signature', position: at(0.1, 0.8) }] },
      });
      assert.equal(signed.status, 503, signed.text);
      assert.equal(signed.body.code, 'SEAL_CERTIFICATE_REVOKED');
      const { signatures } = await verifyPdf({ pdf: await mainFileOf(server, admin, id) });
      assert.equal(signatures.length, 0, 'nothing was signed');
      const jobs = await server.app.deps.db
        .selectFrom('jobs')
        .select('id')
        .where('type', '=', 'document.sealOnComplete')
        .execute();
      assert.deepEqual(jobs, []);
    });
  });

  it('with the development CA on a fresh start: its seal names Signery’s CRL and OCSP under PUBLIC_URL, which answer; a seal at each level, B-LTA end to end', async () => {
    const server = await startServer({ env: { TSA_URL: pki.tsaUrl, REVOCATION_ALLOW_PRIVATE: 'true' } });
    try {
      const { devCa } = await server.app.deps.seal();
      assert.ok(devCa);
      const publicUrl = server.app.deps.config.publicUrl;
      assert.deepEqual(revocationUrls(devCa.sealCertificate), {
        ocsp: [`${publicUrl}/pki/ocsp`],
        crl: [`${publicUrl}/pki/dev-ca.crl`],
      });
      // What the certificate names is served (here at the test server's own address).
      const rootFile = await space.write('dev-root.pem', pem('CERTIFICATE', devCa.rootCertificate));
      const sealFile = await space.write('dev-seal.pem', pem('CERTIFICATE', devCa.sealCertificate));
      const crl = await fetch(`${server.url}/pki/dev-ca.crl`);
      assert.equal(crl.headers.get('content-type'), 'application/pkix-crl');
      const crlFile = await space.write('dev.crl', new Uint8Array(await crl.arrayBuffer()));
      if (hasTool('openssl')) {
        const checked = await tool('openssl', [
          'crl',
          '-inform',
          'DER',
          '-in',
          crlFile,
          '-CAfile',
          rootFile,
          '-noout',
        ]);
        assert.match(checked, /verify OK/, checked);
        const answer = await tool('openssl', [
          'ocsp',
          '-issuer',
          rootFile,
          '-cert',
          sealFile,
          '-url',
          `${server.url}/pki/ocsp`,
          '-CAfile',
          rootFile,
        ]);
        assert.match(answer, /Response verify OK/, answer);
        assert.match(answer, /dev-seal\.pem: good/, answer);
      }
      const admin = await server.adminToken();
      for (const level of LEVELS) {
        const { id, pdf } = await sealedAt(server, admin, level);
        const report = await server.api('GET', `/documents/${id}/verify`, {
          token: admin,
          query: { evidence: 'true' },
        });
        assert.equal(report.body.signatures[0].level, level);
        const { signatures, securityStore } = await verifyPdf({
          pdf,
          trustAnchors: [devCa.rootCertificate, pki.certificates.root],
        });
        assert.equal(signatures[0]!.level, level);
        if (level === 'B-LT' || level === 'B-LTA') {
          assert.equal(
            securityStore!.ocsps.length,
            2,
            'the dev CA’s answer for the seal, the outside one for the TSA',
          );
          assert.equal(signatures[0]!.certificate.revocation, 'good');
          assert.equal(signatures[0]!.timestamp?.revocation, 'good');
        }
        const caFile = await space.write(
          'dev-ca.pem',
          pem('CERTIFICATE', devCa.rootCertificate) + (await readFile(pki.caFile, 'utf8')),
        );
        await assertOraclesAccept(space, pdf, `dev-${level}`, devCa.rootCertificate, caFile);
      }
    } finally {
      await server.close();
    }
  });
});

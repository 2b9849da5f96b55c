import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { OID } from '../../src/pki/algorithms.js';
import { readSignedData } from '../../src/pki/cms/read-signed-data.js';
import { verifyFile } from '../../src/ops/verify-file.js';
import { findSignatures } from '../../src/pdf/find-signatures.js';
import { readPdf } from '../../src/pdf/appendable-pdf.js';
import { createP12Signer } from '../../src/pki/signers/p12.js';
import { RevocationFetcher } from '../../src/pki/revocation-fetcher.js';
import { httpRevocationTransport } from '../../src/pki/revocation-transport.js';
import { Agent } from 'node:http';
import { readFile } from 'node:fs/promises';
import { createHash, createPrivateKey } from 'node:crypto';
import { rsaToken } from '../fixtures/test-pki.js';
import { useOpensslPki } from '../fixtures/openssl-pki.js';
import { aDocument, mainFileOf } from '../helpers/documents.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { useWorkspace } from '../pdf/oracles.js';

const seal = (server: TestServer, token: string, id: string, level: string) =>
  server.api('PUT', '/documents/seal/1', { token, body: { id, certificate: true, level } });

/**
 * `signery verify` in its own process, as a stranger runs it: its JSON report and exit status. Not
 * spawnSync: the PKI's CRL server runs in this process and must answer `--online`.
 */
async function signeryVerify(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'verify', ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: '/nonexistent/signery-data',
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      ...env,
    },
    timeout: 120_000,
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, report: stdout ? JSON.parse(stdout) : undefined };
}

describe('a revocation status is reported only with its evidence, and only a trusted anchor makes a chain trusted', () => {
  const pki = useOpensslPki();
  const space = useWorkspace();

  async function withServer(
    env: Record<string, string>,
    use: (server: TestServer, admin: string) => Promise<void>,
  ) {
    const server = await startServer({ env: { REVOCATION_ALLOW_PRIVATE: 'true', ...env } });
    try {
      await use(server, await server.adminToken());
    } finally {
      await server.close();
    }
  }
  const outsideSeal = (p12: string) => ({ SEAL_P12: p12, SEAL_P12_PASSWORD: pki.p12Password });

  it('a revoked seal certificate never signs: seal at B-B and B-T and a user signature answer 503 SEAL_CERTIFICATE_REVOKED, the document unchanged', async () => {
    await withServer({ ...outsideSeal(pki.revokedSealP12), TSA_URL: pki.tsaUrl }, async (server, admin) => {
      const id = await aDocument(server, admin, { title: 'Revoked' });
      for (const level of ['B-B', 'B-T']) {
        const sealed = await seal(server, admin, id, level);
        assert.equal(sealed.status, 503, sealed.text);
        assert.equal(sealed.body.code, 'SEAL_CERTIFICATE_REVOKED');
        assert.match(sealed.body.message, /Outside Revoked Seal is revoked \((OCSP|CRL)\)/);
      }
      const signed = await server.api('PUT', '/documents/sign/1', {
        token: admin,
        body: {
          id,
          level: 'B-B',
          signatures: [
            {
              type: 'signature',
              position: { percentX: 0.1, percentY: 0.8, percentWidth: 0.25, percentHeight: 0.08 },
            },
          ],
        },
      });
      assert.equal(signed.status, 503, signed.text);
      assert.equal(signed.body.code, 'SEAL_CERTIFICATE_REVOKED');
      const doc = (await server.api('GET', `/documents/${id}`, { token: admin })).body.results[0];
      assert.deepEqual([doc._version, doc.isSigned], [1, false]);
    });
  });

  it('the status checked before signing is signed into the CMS (adbe-revocationInfoArchival): a B-B seal verifies TOTAL_PASSED from the file alone, its own chain trusted without TRUST_ANCHORS', async () => {
    await withServer(outsideSeal(pki.sealP12), async (server, admin) => {
      const id = await aDocument(server, admin, { title: 'Proved' });
      const sealed = await seal(server, admin, id, 'B-B');
      assert.equal(sealed.status, 200, sealed.text);
      assert.equal(sealed.body.warnings, undefined, sealed.text);
      const pdf = await mainFileOf(server, admin, id);
      const cms = await readPdf(pdf, (opened) =>
        readSignedData({ der: findSignatures({ opened })[0]!.contents }),
      );
      assert.ok(cms.signedAttributeValues.has(OID.adbeRevocationInfoArchival), 'the attribute is signed');
      assert.ok(cms.archivedRevocation.ocsps.length + cms.archivedRevocation.crls.length >= 2);
      // The installation's own seal: trusted by default (the root its PKCS#12 carries), status from the file.
      const report = (await server.api('GET', `/documents/${id}/verify`, { token: admin })).body;
      const signature = report.signatures[0];
      assert.equal(signature.indication, 'TOTAL_PASSED', JSON.stringify(signature));
      assert.equal(signature.certificate.trusted, true);
      assert.equal(signature.certificate.revocation, 'good');
      assert.ok(signature.certificate.revocationData.every((r: { foundIn: string }) => r.foundIn === 'cms'));
      // signery verify, trusting that root: intact, exit 0.
      const file = await space.write('proved.pdf', pdf);
      const cli = await signeryVerify([file, '--trust', pki.root]);
      assert.equal(cli.report.verdict, 'valid', JSON.stringify(cli.report));
      assert.equal(cli.status, 0);
    });
  });

  it('responder down at B-B: sealed with the warning in the answer; verification answers INDETERMINATE / TRY_LATER, never TOTAL_PASSED, and signery verify exits non-zero', async () => {
    await withServer(outsideSeal(pki.sealP12), async (server, admin) => {
      await pki.set('ocsp', false);
      await pki.set('crl', false);
      let pdf: Uint8Array;
      let id: string;
      try {
        id = await aDocument(server, admin, { title: 'Unproved' });
        const sealed = await seal(server, admin, id, 'B-B');
        assert.equal(sealed.status, 200, sealed.text);
        assert.equal(sealed.body.levelAchieved, 'B-B');
        assert.ok(Array.isArray(sealed.body.warnings), sealed.text);
        assert.match(sealed.body.warnings.join(' '), /Outside Seal could not be checked before signing/);
        pdf = await mainFileOf(server, admin, id);
      } finally {
        await pki.set('ocsp', true);
        await pki.set('crl', true);
      }
      const report = (await server.api('GET', `/documents/${id}/verify`, { token: admin })).body;
      const signature = report.signatures[0];
      assert.equal(signature.certificate.trusted, true, 'trusted: the seal chain is the installation’s');
      assert.equal(signature.certificate.revocation, 'unknown');
      assert.deepEqual([signature.indication, signature.subIndication], ['INDETERMINATE', 'TRY_LATER']);
      const offline = await verifyFile(pdf, { trustAnchors: [pki.certificates.root] });
      // The one headline (pdf/verdict.ts): a signer whose revocation the file does not establish is not confirmed.
      assert.equal(offline.verdict, 'unconfirmed');
      assert.equal(offline.signatures[0]!.revocation, 'unknown');
      assert.match(offline.reason, /not confirmed \(TRY_LATER\)/);
      const file = await space.write('unproved.pdf', pdf);
      const cli = await signeryVerify([file, '--trust', pki.root]);
      assert.equal(cli.report.verdict, 'unconfirmed');
      assert.notEqual(cli.status, 0);
    });
  });

  /** Seals a document with `p12` at B-B while every responder is down: the file holds no status of its chain. */
  async function sealedWithoutStatus(server: TestServer, admin: string, title: string): Promise<string> {
    await pki.set('ocsp', false);
    await pki.set('crl', false);
    try {
      const id = await aDocument(server, admin, { title });
      const sealed = await seal(server, admin, id, 'B-B');
      assert.equal(sealed.status, 200, sealed.text);
      assert.match(sealed.body.warnings.join(' '), /could not be checked before signing/);
      return id;
    } finally {
      await pki.set('ocsp', true);
      await pki.set('crl', true);
    }
  }
  type Found = { foundIn: string; status: string };

  it('VERIFY_FETCH_REVOCATION: a trusted chain the file gives no status for is asked online, said so (foundIn online, a warning) and proves no level; responders down, it stays TRY_LATER; signery verify --online does the same', async () => {
    await withServer(
      { ...outsideSeal(pki.sealP12), VERIFY_FETCH_REVOCATION: 'true' },
      async (server, admin) => {
        const id = await sealedWithoutStatus(server, admin, 'Asked online');
        const verify = async () =>
          (await server.api('GET', `/documents/${id}/verify`, { token: admin })).body;

        await pki.set('ocsp', false);
        await pki.set('crl', false);
        let down;
        try {
          down = (await verify()).signatures[0];
        } finally {
          await pki.set('ocsp', true);
          await pki.set('crl', true);
        }
        assert.deepEqual([down.indication, down.subIndication], ['INDETERMINATE', 'TRY_LATER']);
        assert.match(
          down.warnings.join(' '),
          /Revocation status not fetched online: No revocation data for Outside Seal/,
        );

        const report = await verify();
        const signature = report.signatures[0];
        assert.equal(signature.indication, 'TOTAL_PASSED', JSON.stringify(signature));
        assert.equal(signature.certificate.revocation, 'good');
        const found: Found[] = signature.certificate.revocationData;
        assert.ok(
          found.length >= 2 && found.every((r) => r.foundIn === 'online' && r.status === 'good'),
          JSON.stringify(found),
        );
        assert.match(
          signature.warnings.join(' '),
          /Revocation status fetched online at .*, not found in the file: good/,
        );
        assert.equal(signature.level, 'B-B', 'an answer that is not in the file proves no B-LT');
        assert.equal(report.verdict.headline, 'valid');

        const pdf = await mainFileOf(server, admin, id);
        const file = await space.write('asked-online.pdf', pdf);
        const offline = await signeryVerify([file, '--trust', pki.root]);
        assert.equal(offline.report.verdict, 'unconfirmed');
        const online = await signeryVerify([file, '--trust', pki.root, '--online'], {
          REVOCATION_ALLOW_PRIVATE: 'true',
        });
        assert.equal(online.report.verdict, 'valid', JSON.stringify(online.report));
        assert.equal(online.report.signatures[0].revocation, 'good');
        assert.equal(online.status, 0);
      },
    );
  });

  it('VERIFY_FETCH_REVOCATION: a key revoked whose status the file lacks is found revoked online (TOTAL_FAILED / REVOKED); without the setting nothing is fetched (TRY_LATER)', async () => {
    let pdf!: Buffer;
    await withServer(
      { ...outsideSeal(pki.revokedSealP12), VERIFY_FETCH_REVOCATION: 'true' },
      async (server, admin) => {
        const id = await sealedWithoutStatus(server, admin, 'Revoked, unseen');
        const signature = (await server.api('GET', `/documents/${id}/verify`, { token: admin })).body
          .signatures[0];
        assert.deepEqual(
          [signature.indication, signature.subIndication],
          ['TOTAL_FAILED', 'REVOKED'],
          JSON.stringify(signature),
        );
        assert.ok(
          signature.certificate.revocationData.some(
            (r: Found) => r.foundIn === 'online' && r.status === 'revoked',
          ),
        );
        pdf = await mainFileOf(server, admin, id);
      },
    );
    await withServer(outsideSeal(pki.revokedSealP12), async (server, admin) => {
      const answer = await server.api('POST', '/verify', {
        token: admin,
        form: { file: { name: 'revoked.pdf', type: 'application/pdf', bytes: pdf } },
      });
      const signature = answer.body.signatures[0];
      assert.deepEqual([signature.indication, signature.subIndication], ['INDETERMINATE', 'TRY_LATER']);
      assert.deepEqual(signature.certificate.revocationData, []);
      assert.doesNotMatch(signature.warnings.join(' '), /online/);
    });
  });

  it('two-step signing: a user certificate that is revoked prepares nothing (400 on certificateHash); a good one has its status signed with it and verifies TOTAL_PASSED from the file; a responder down is a warning', async () => {
    await withServer({ TRUST_ANCHORS: pki.root }, async (server, admin) => {
      const { id: userId } = (
        await server.api('POST', '/users', {
          token: admin,
          body: { name: 'tess', password: 'user-password-1' },
        })
      ).body;
      const token = await server.login('tess', 'user-password-1');
      const register = async (leaf: Uint8Array) => {
        const form = new FormData();
        const pems = [leaf, pki.certificates.intermediate, pki.certificates.root].map(
          (der) =>
            `-----BEGIN CERTIFICATE-----\n${Buffer.from(der)
              .toString('base64')
              .match(/.{1,64}/g)!
              .join('\n')}\n-----END CERTIFICATE-----\n`,
        );
        form.append('file', new Blob([pems.join('')]), 'certificate.pem');
        const answer = await fetch(`${server.url}/api/v1/users/${userId}/certificate?token=${token}`, {
          method: 'POST',
          body: form,
        });
        assert.equal(answer.status, 200, await answer.text());
      };
      const start = async (leaf: Uint8Array) =>
        server.api('POST', '/documents/sign/1/start/digest', {
          token,
          body: {
            id: await aDocument(server, token, { title: 'Two steps' }),
            certificateHash: createHash('sha256').update(leaf).digest('hex'),
            signatureProvider: 'internalUsb',
          },
        });

      await register(pki.certificates.revokedSeal);
      const refused = await start(pki.certificates.revokedSeal);
      assert.equal(refused.status, 400, refused.text);
      assert.match(
        refused.body.message,
        /"certificateHash" names a revoked certificate: Outside Revoked Seal is revoked/,
      );

      await register(pki.certificates.seal);
      const started = await start(pki.certificates.seal);
      assert.equal(started.status, 200, started.text);
      assert.equal(started.body.warnings, undefined, started.text);
      const key = createPrivateKey(await readFile(join(pki.dir, 'seal.key')));
      const digest = Buffer.from(started.body.files[0].digest, 'base64');
      const finished = await server.api('PUT', '/documents/sign/finish/digest', {
        token,
        body: {
          sessionId: started.body.sessionId,
          signedDigests: [
            {
              originalDigest: started.body.files[0].digest,
              signedDigest: rsaToken(key, 'SHA-256')(digest).toString('base64'),
            },
          ],
        },
      });
      assert.equal(finished.status, 200, finished.text);
      const signature = (await server.api('GET', `/documents/${finished.body.documentId}/verify`, { token }))
        .body.signatures[0];
      assert.equal(signature.indication, 'TOTAL_PASSED', JSON.stringify(signature));
      assert.ok(signature.certificate.revocationData.every((r: Found) => r.foundIn === 'cms'));

      await pki.set('ocsp', false);
      await pki.set('crl', false);
      try {
        // The status asked a moment ago is kept for a while: another certificate is asked afresh.
        await register(pki.certificates.tsa);
        const unchecked = await start(pki.certificates.tsa);
        assert.equal(unchecked.status, 200, unchecked.text);
        assert.match(unchecked.body.warnings.join(' '), /could not be checked before signing/);
      } finally {
        await pki.set('ocsp', true);
        await pki.set('crl', true);
      }
    });
  });

  it('TRUST_ANCHORS (a file or a directory) names the roots verification trusts; without it another CA’s seal is NO_CERTIFICATE_CHAIN_FOUND', async () => {
    // A file sealed by the outside PKI's installation...
    let outside!: Buffer;
    await withServer(outsideSeal(pki.sealP12), async (server, admin) => {
      const id = await aDocument(server, admin, { title: 'Outside' });
      assert.equal((await seal(server, admin, id, 'B-B')).status, 200);
      outside = await mainFileOf(server, admin, id);
    });
    const verifyAt = async (env: Record<string, string>) => {
      let signature: { indication: string; subIndication?: string } | undefined;
      await withServer(env, async (server, admin) => {
        const answer = await server.api('POST', '/verify', {
          token: admin,
          form: { file: { name: 'outside.pdf', type: 'application/pdf', bytes: outside } },
        });
        assert.equal(answer.status, 200, answer.text);
        signature = answer.body.signatures[0];
      });
      return signature!;
    };
    // ...verified by an installation on the dev CA: not trusted, until TRUST_ANCHORS names the root.
    const untrusted = await verifyAt({});
    assert.deepEqual(
      [untrusted.indication, untrusted.subIndication],
      ['INDETERMINATE', 'NO_CERTIFICATE_CHAIN_FOUND'],
    );
    assert.equal((await verifyAt({ TRUST_ANCHORS: pki.root })).indication, 'TOTAL_PASSED');
    const dir = join(space.dir, 'anchors');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'outside-root.pem'), pki.rootPem);
    await writeFile(join(dir, 'README'), 'not a certificate, and not read');
    assert.equal((await verifyAt({ TRUST_ANCHORS: dir })).indication, 'TOTAL_PASSED');
  });

  it('the status checked before signing is kept briefly: a burst of seals asks the responder once', async () => {
    let asked = 0;
    const transport = httpRevocationTransport({ check: async () => undefined, agentFor: () => new Agent() });
    const fetcher = new RevocationFetcher({
      transport: async (url, options) => {
        asked++;
        return transport(url, options);
      },
      timeoutMs: 5_000,
    });
    const signer = await createP12Signer({ p12: await readFile(pki.sealP12), password: pki.p12Password });
    const chain = [signer.certificate, ...signer.chain];
    const now = new Date();
    const statuses = await Promise.all(Array.from({ length: 20 }, () => fetcher.beforeSigning(chain, now)));
    assert.ok(asked > 0 && asked <= 2, `one answer per certificate below the root, asked ${asked} times`);
    assert.deepEqual(statuses[0]!.warnings, []);
    await fetcher.beforeSigning(chain, new Date(now.getTime() + 60_000));
    assert.ok(asked <= 2, 'a minute later: still the kept answer');
  });
});

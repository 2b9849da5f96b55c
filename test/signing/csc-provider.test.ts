import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { loadConfig } from '../../src/base/config.js';
import { verifyPdf } from '../../src/pdf/verify-pdf.js';
import { startCscServer, type CscServerOptions, type TestCscServer } from '../fixtures/csc-server.js';
import { useOpensslPki } from '../fixtures/openssl-pki.js';
import { aDocument, mainFileOf, readDocument } from '../helpers/documents.js';
import { createUser, startServer, USER_PASSWORD, type TestServer } from '../helpers/server.js';
import { shareDocument } from '../helpers/sharing.js';
import { extractSignatures, hasTool, opensslVerifies, tool, useWorkspace } from '../pdf/oracles.js';

const at = { percentX: 0.1, percentY: 0.8, percentWidth: 0.25, percentHeight: 0.08 };

describe('a remote seal provider speaking the CSC API v2', () => {
  const pki = useOpensslPki();
  const space = useWorkspace();

  /**
   * A CSC service holding the outside PKI's seal key, and a Signery server configured for it (its
   * environment changed by `env`); both closed after `use`.
   */
  async function withCsc(
    options: {
      csc?: Partial<CscServerOptions>;
      env?: (csc: TestCscServer) => Record<string, string>;
      clock?: ManualClock;
    },
    use: (server: TestServer, admin: string, csc: TestCscServer) => Promise<void>,
  ) {
    const csc = await startCscServer({
      key: await readFile(join(pki.dir, 'seal.key'), 'utf8'),
      certificates: [pki.certificates.seal, pki.certificates.intermediate, pki.certificates.root],
      ...options.csc,
    });
    const server = await startServer({
      env: {
        CSC_URL: csc.serviceUrl,
        CSC_CLIENT_ID: csc.clientId,
        CSC_CLIENT_SECRET: csc.clientSecret,
        TSA_URL: pki.tsaUrl,
        REVOCATION_ALLOW_PRIVATE: 'true',
        ...options.env?.(csc),
      },
      ...(options.clock ? { clock: options.clock } : {}),
    });
    try {
      await use(server, await server.adminToken(), csc);
    } finally {
      await server.close();
      await csc.close();
    }
  }

  const seal = (server: TestServer, token: string, id: string, body: Record<string, unknown> = {}) =>
    server.api('PUT', '/documents/seal/1', { token, body: { id, certificate: true, ...body } });

  /** The common name of the certificate that made the document's first signature. */
  async function sealedBy(server: TestServer, token: string, id: string) {
    const { signatures } = await verifyPdf({
      pdf: await mainFileOf(server, token, id),
      trustAnchors: [pki.certificates.root],
    });
    return signatures[0]!;
  }

  it('`signatureProvider: "csc"` seals with the remote key at B-LTA: the hash goes out, the signature comes back, and every validator accepts it', async () => {
    await withCsc({}, async (server, admin, csc) => {
      const id = await aDocument(server, admin, { title: 'Remote seal' });
      const sealed = await seal(server, admin, id, { signatureProvider: 'csc', level: 'B-LTA' });
      assert.equal(sealed.status, 200, sealed.text);
      assert.deepEqual([sealed.body.levelAchieved, sealed.body.fellBack], ['B-LTA', false], sealed.text);

      const signature = await sealedBy(server, admin, id);
      assert.equal(signature.signer?.commonName, 'Outside Seal', 'made with the credential’s certificate');
      assert.equal(signature.level, 'B-LTA');
      assert.equal(signature.indication, 'TOTAL_PASSED', JSON.stringify(signature.problems));
      assert.equal(signature.certificate.revocation, 'good', 'the CSC chain’s revocation data is in the DSS');

      // The published flow: a token by client credentials, the credential and its chain, an
      // authorisation bound to the one hash, and signHash for that hash; the document never left.
      const methods = csc.requests.map((r) => r.method);
      assert.deepEqual(methods.slice(0, 4), ['info', 'oauth2/token', 'credentials/list', 'credentials/info']);
      assert.deepEqual(methods.slice(4), ['credentials/authorize', 'signatures/signHash']);
      const signHash = csc.requests.at(-1)!;
      assert.equal(signHash.body.credentialID, csc.credentialId);
      assert.equal(signHash.body.hashAlgorithmOID, '2.16.840.1.101.3.4.2.1');
      assert.equal(signHash.body.signAlgo, '1.2.840.113549.1.1.11');
      assert.equal(
        (signHash.body.hashes as string[])[0]!.length,
        44,
        'one base64 SHA-256 hash, not the file',
      );
      assert.match(signHash.authorization ?? '', /^Bearer [0-9a-f]{32}$/);

      const pdf = await mainFileOf(server, admin, id);
      const path = await space.write('csc-sealed.pdf', pdf);
      if (hasTool('mutool')) {
        const out = await tool('mutool', ['sign', '-v', path]);
        assert.doesNotMatch(out, /Digest (failure|mismatch)|Signature is invalid/i, out);
      }
      if (hasTool('openssl')) {
        const [made] = (await extractSignatures(space, pdf, 'csc')).filter((e) => e.type !== 'DocTimeStamp');
        assert.ok(await opensslVerifies(made!, pki.caFile), 'openssl cms -verify');
      }

      // A second seal reuses the credential and the token: only authorize and signHash again.
      const again = await aDocument(server, admin, { title: 'Second' });
      const before = csc.requests.length;
      assert.equal(
        (await seal(server, admin, again, { signatureProvider: 'csc', level: 'B-B' })).status,
        200,
      );
      assert.deepEqual(
        csc.requests.slice(before).map((r) => r.method),
        ['credentials/authorize', 'signatures/signHash'],
      );
      // `internal` is still the organisation's own key.
      const internal = await aDocument(server, admin, { title: 'Internal' });
      assert.equal((await seal(server, admin, internal, { signatureProvider: 'internal' })).status, 200);
      assert.notEqual((await sealedBy(server, admin, internal)).signer?.commonName, 'Outside Seal');
    });
  });

  it('SEAL_PROVIDER=csc backs the organisation seal by default: the seal call, a user’s signature and the seal on completion', async () => {
    await withCsc({ env: () => ({ SEAL_PROVIDER: 'csc' }) }, async (server, admin) => {
      const id = await aDocument(server, admin, { title: 'Default provider' });
      assert.equal((await seal(server, admin, id)).status, 200);
      assert.equal((await sealedBy(server, admin, id)).signer?.commonName, 'Outside Seal');

      await createUser(server, { name: 'csc-signer', email: 'csc-signer@example.test' });
      const doc = await aDocument(server, admin, { title: 'Signed by a user' });
      await shareDocument(server, admin, doc, { to: 'csc-signer' });
      const signer = await server.login('csc-signer', USER_PASSWORD);
      const { _version: version } = await readDocument(server, admin, doc);
      const signed = await server.api('PUT', `/documents/sign/${version}`, {
        token: signer,
        body: { id: doc, level: 'B-B', signatures: [{ type: 'signature', position: at }] },
      });
      assert.equal(signed.status, 200, signed.text);
      assert.equal(signed.body.shareStateName, 'completed');
      const { signatures } = await verifyPdf({ pdf: await mainFileOf(server, admin, doc) });
      assert.equal(signatures.length, 2, 'the user’s signature and the seal made on completion');
      for (const made of signatures) {
        assert.equal(made.signer?.commonName, 'Outside Seal', `${made.fieldName} made with the CSC key`);
      }
    });
  });

  it('the seal on completion fails after the last signature committed: the call still answers 200, the job keeps the seal, and the worker seals once the service is back', async () => {
    const clock = new ManualClock(new Date());
    await withCsc({ env: () => ({ SEAL_PROVIDER: 'csc' }), clock }, async (server, admin, csc) => {
      await createUser(server, { name: 'csc-retry', email: 'csc-retry@example.test' });
      const doc = await aDocument(server, admin, { title: 'Sealed later' });
      await shareDocument(server, admin, doc, { to: 'csc-retry' });
      const signer = await server.login('csc-retry', USER_PASSWORD);
      const { _version: version } = await readDocument(server, admin, doc);
      // The user's signature goes through; the service fails from the next hash on (the seal's).
      let hashes = 0;
      csc.refuses = (method) => method === 'signatures/signHash' && ++hashes > 1;
      const signed = await server.api('PUT', `/documents/sign/${version}`, {
        token: signer,
        body: { id: doc, level: 'B-B', signatures: [{ type: 'signature', position: at }] },
      });
      assert.equal(signed.status, 200, signed.text);
      assert.equal(signed.body.shareStateName, 'completed');
      const signedOnly = await verifyPdf({ pdf: await mainFileOf(server, admin, doc) });
      assert.equal(signedOnly.signatures.length, 1, 'the signature is committed, the seal not made');
      const job = async () =>
        (await server.app.deps.db
          .selectFrom('jobs')
          .select(['status', 'attempts', 'last_error', 'run_at'])
          .where('type', '=', 'document.sealOnComplete')
          .executeTakeFirstOrThrow()) as {
          status: string;
          attempts: number;
          last_error: string;
          run_at: string;
        };
      const failed = await job();
      assert.equal(failed.attempts, 1);
      assert.notEqual(failed.status, 'done');
      assert.match(failed.last_error, /signHash answered 503/);

      csc.refuses = undefined;
      clock.advance(new Date(failed.run_at).getTime() - clock.now().getTime() + 1_000);
      server.app.worker?.wake();
      for (let i = 0; i < 200 && (await job()).status !== 'done'; i++)
        await new Promise((r) => setTimeout(r, 50));
      assert.equal((await job()).status, 'done');
      const sealed = await verifyPdf({ pdf: await mainFileOf(server, admin, doc) });
      assert.equal(sealed.signatures.length, 2, 'the user’s signature and the seal the worker made');
      assert.equal(sealed.signatures[1]!.reason, 'Completed');
    });
  });

  it('DESIGN: a signature waits for the remote signer with no transaction open; other writes go on meanwhile', async () => {
    await withCsc({ env: () => ({ SEAL_PROVIDER: 'csc' }) }, async (server, admin, csc) => {
      const doc = await aDocument(server, admin, { title: 'Held by the signer' });
      csc.hold('signatures/signHash');
      const signing = server.api('PUT', '/documents/sign/1', {
        token: admin,
        body: { id: doc, level: 'B-B', signatures: [{ type: 'signature', position: at }] },
      });
      try {
        await csc.held(1);
        // On SQLite a transaction held open across the remote signer would keep this writer waiting.
        const other = await aDocument(server, admin, { title: 'Written meanwhile' });
        assert.equal((await readDocument(server, admin, other))._version, 1);
        const pending = Symbol('pending');
        assert.equal(await Promise.race([signing, Promise.resolve(pending)]), pending, 'the signature waits');
      } finally {
        csc.release();
      }
      const signed = await signing;
      assert.equal(signed.status, 200, signed.text);
      assert.equal((await readDocument(server, admin, doc))._version, 2);
    });
  });

  it('an explicit credential is authorised with CSC_PIN; a wrong PIN fails the call with SIGNER_UNAVAILABLE and changes nothing', async () => {
    await withCsc(
      { csc: { pin: '123456' }, env: () => ({ CSC_PIN: '123456' }) },
      async (server, admin, csc) => {
        const id = await aDocument(server, admin, { title: 'With a PIN' });
        assert.equal((await seal(server, admin, id, { signatureProvider: 'csc', level: 'B-B' })).status, 200);
        const authorize = csc.requests.find((r) => r.method === 'credentials/authorize')!;
        assert.deepEqual(authorize.body.authData, [{ id: 'PIN', value: '123456' }]);
      },
    );
    await withCsc({ csc: { pin: '123456' }, env: () => ({ CSC_PIN: '000000' }) }, async (server, admin) => {
      const id = await aDocument(server, admin, { title: 'Wrong PIN' });
      const sealed = await seal(server, admin, id, { signatureProvider: 'csc', level: 'B-B' });
      assert.equal(sealed.status, 503, sealed.text);
      assert.equal(sealed.body.code, 'SIGNER_UNAVAILABLE');
      assert.match(sealed.body.message, /credentials\/authorize answered 400 \(invalid_pin/);
      assert.doesNotMatch(sealed.text, /000000/, 'the PIN is never echoed');
      const doc = await readDocument(server, admin, id);
      assert.deepEqual([doc._version, doc.isSigned], [1, false]);
    });
  });

  it('the service down: 503 SIGNER_UNAVAILABLE naming it, nothing written; once it is back the next call seals', async () => {
    await withCsc({}, async (server, admin, csc) => {
      const id = await aDocument(server, admin, { title: 'Service down' });
      csc.down = true;
      const refused = await seal(server, admin, id, { signatureProvider: 'csc', level: 'B-B' });
      assert.equal(refused.status, 503, refused.text);
      assert.equal(refused.body.code, 'SIGNER_UNAVAILABLE');
      assert.match(refused.body.message, /^CSC info answered 503/);
      const doc = await readDocument(server, admin, id);
      assert.deepEqual([doc._version, doc.isSigned], [1, false]);
      csc.down = false;
      const sealed = await seal(server, admin, id, { signatureProvider: 'csc', level: 'B-B' });
      assert.equal(sealed.status, 200, sealed.text);
    });
  });

  it('several credentials: the one CSC_CREDENTIAL_ID names, and without it a clear refusal', async () => {
    const csc = { otherCredentials: ['another-credential'] };
    await withCsc({ csc }, async (server, admin) => {
      const id = await aDocument(server, admin, { title: 'Which credential' });
      const refused = await seal(server, admin, id, { signatureProvider: 'csc', level: 'B-B' });
      assert.equal(refused.status, 503, refused.text);
      assert.match(refused.body.message, /lists 2 credentials: set CSC_CREDENTIAL_ID/);
    });
    await withCsc(
      { csc, env: (server) => ({ CSC_CREDENTIAL_ID: server.credentialId }) },
      async (server, admin, remote) => {
        const id = await aDocument(server, admin, { title: 'Named credential' });
        assert.equal((await seal(server, admin, id, { signatureProvider: 'csc', level: 'B-B' })).status, 200);
        assert.ok(!remote.requests.some((r) => r.method === 'credentials/list'), 'no list needed');
      },
    );
  });

  it('a token that runs out is taken again by client credentials; the service’s info is asked only once', async () => {
    await withCsc({ csc: { tokenSeconds: 2 } }, async (server, admin, csc) => {
      const sealAt = async (title: string) => {
        const id = await aDocument(server, admin, { title });
        const sealed = await seal(server, admin, id, { signatureProvider: 'csc', level: 'B-B' });
        assert.equal(sealed.status, 200, sealed.text);
      };
      await sealAt('First token');
      await new Promise((resolve) => setTimeout(resolve, 1_200)); // past half its two seconds
      const before = csc.requests.length;
      await sealAt('Second token');
      assert.deepEqual(
        csc.requests.slice(before).map((r) => r.method),
        ['oauth2/token', 'credentials/authorize', 'signatures/signHash'],
      );
      assert.equal(csc.requests.filter((r) => r.method === 'info').length, 1);
    });
  });

  it('without a CSC service, `csc` is not a provider (400), and SEAL_PROVIDER=csc without CSC_URL does not start', async () => {
    const server = await startServer();
    try {
      const admin = await server.adminToken();
      const id = await aDocument(server, admin, { title: 'No CSC' });
      const refused = await seal(server, admin, id, { signatureProvider: 'csc' });
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.code, 'VALIDATION_ERROR');
      assert.match(refused.body.message, /signatureProvider.*must be one of \[internal\]/);
    } finally {
      await server.close();
    }
    assert.throws(() => loadConfig({ SEAL_PROVIDER: 'csc' }), /SEAL_PROVIDER=csc needs CSC_URL/);
    assert.throws(() => loadConfig({ CSC_URL: 'https://rssp.example/csc/v2' }), /CSC_CLIENT_ID/);
    assert.throws(() => loadConfig({ SEAL_PROVIDER: 'hsm' }), /SEAL_PROVIDER must be internal or csc/);
  });
});

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useOpensslPki } from '../fixtures/openssl-pki.js';
import { writeMainFile } from '../helpers/documents.js';
import { makePdf } from '../helpers/pdf.js';
import { startServer, upload, type TestServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { assertSignaturesValid, useWorkspace } from '../pdf/oracles.js';

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.08 });

async function newDocument(server: TestServer, token: string, optionalData?: Record<string, unknown>) {
  const content = await upload(server, token, makePdf());
  const created = await server.api('POST', '/documents', {
    token,
    body: {
      body: { documentTitle: 'Level', pdfFile: { content } },
      ...(optionalData ? { optionalData } : {}),
    },
  });
  assert.equal(created.status, 200, created.text);
  return created.body as { results: { documentId: string; _version: number }[]; signing?: unknown };
}

const setLevel = (server: TestServer, token: string, level: string | null) =>
  server.api('PUT', '/settings/properties', { token, body: { defaultPadesLevel: level } });

/** PUT /documents/seal/1 of a new document, naming no level. */
async function sealNewDocument(server: TestServer, token: string) {
  const doc = (await newDocument(server, token)).results[0]!;
  return server.api('PUT', '/documents/seal/1', { token, body: { id: doc.documentId, certificate: true } });
}

describe('tenant property defaultPadesLevel: the level of sign and seal calls that name none', () => {
  it('without a TSA, a level that needs one is refused when set (400), B-B and null are accepted; unset, calls sign at B-B', async () => {
    const server = await startServer();
    try {
      const admin = await server.adminToken();
      const read = await server.api('GET', '/settings/properties', { token: admin });
      assert.equal(read.body.defaultPadesLevel, null, 'unset by default');
      for (const level of ['B-T', 'B-LT', 'B-LTA']) {
        const refused = await setLevel(server, admin, level);
        assert.equal(refused.status, 400, refused.text);
        assert.equal(refused.body.code, 'VALIDATION_ERROR');
        assert.equal(
          refused.body.message,
          `Request validation errors: BODY ERRORS: "defaultPadesLevel" must be B-B or null: ${level} needs a time-stamp authority and none is configured (TSA_URL)`,
        );
      }
      const unknown = await setLevel(server, admin, 'B-X');
      assert.equal(unknown.status, 400);
      assert.equal((await setLevel(server, admin, 'B-B')).status, 200);
      assert.equal((await setLevel(server, admin, null)).status, 200);
      const sealed = await sealNewDocument(server, admin);
      assert.equal(sealed.status, 200, sealed.text);
      assert.equal(sealed.body.levelAchieved, 'B-B');
      assert.equal(sealed.body.fellBack, false);
    } finally {
      await server.close();
    }
  });

  describe('with a TSA (TSA_URL)', () => {
    // A TSA whose certificates name their revocation data, so B-LT and B-LTA can be reached.
    const pki = useOpensslPki();
    const server = useServer(() => ({ env: { TSA_URL: pki.tsaUrl, REVOCATION_ALLOW_PRIVATE: 'true' } }));
    const space = useWorkspace();
    let admin: string;
    before(async () => {
      admin = await server.adminToken();
    });

    const seal = (id: string, version: number, level?: string) =>
      server.api('PUT', `/documents/seal/${version}`, {
        token: admin,
        body: { id, certificate: true, ...(level ? { level } : {}) },
      });
    const sign = (id: string, version: number, level?: string) =>
      server.api('PUT', `/documents/sign/${version}`, {
        token: admin,
        body: {
          id,
          signatures: [{ type: 'signature', position: at(0.1, 0.8) }],
          ...(level ? { level } : {}),
        },
      });

    it('the tenant default applies to seal, sign and signing at creation, and a call’s `level` wins', async () => {
      assert.equal((await setLevel(server, admin, 'B-B')).status, 200);
      const plain = (await newDocument(server, admin)).results[0]!;
      const requests = pki.served.tsa;
      const b = await seal(plain.documentId, 1);
      assert.equal(b.status, 200, b.text);
      assert.equal(b.body.levelAchieved, 'B-B', 'B-B although the server has a TSA');
      assert.equal(pki.served.tsa, requests, 'no timestamp asked for');
      const overridden = await sign(plain.documentId, 2, 'B-T');
      assert.equal(overridden.status, 200, overridden.text);
      assert.equal(overridden.body.levelAchieved, 'B-T', 'the call’s level wins');
      assert.equal(pki.served.tsa, requests + 1);

      const set = await setLevel(server, admin, 'B-T');
      assert.equal(set.status, 200, set.text);
      assert.equal(set.body.properties.defaultPadesLevel, 'B-T');
      const doc = (await newDocument(server, admin)).results[0]!;
      const t = await sign(doc.documentId, 1);
      assert.equal(t.status, 200, t.text);
      assert.equal(t.body.levelAchieved, 'B-T');
      const bb = await seal(doc.documentId, 2, 'B-B');
      assert.equal(bb.body.levelAchieved, 'B-B', 'the call’s level wins');

      assert.equal((await setLevel(server, admin, 'B-LT')).status, 200);
      const lt = await seal(doc.documentId, 3);
      assert.equal(lt.status, 200, lt.text);
      assert.equal(lt.body.levelAchieved, 'B-LT');
      const atCreation = await newDocument(server, admin, {
        signatures: [{ type: 'signature', position: at(0.1, 0.8) }],
      });
      assert.deepEqual(atCreation.signing, { levelAchieved: 'B-LT', fellBack: false });
      const inChange = await newDocument(server, admin);
      const changed = await server.api('PUT', '/documents/1', {
        token: admin,
        body: {
          id: inChange.results[0]!.documentId,
          body: {},
          level: 'B-T',
          signatures: [{ type: 'signature', position: at(0.1, 0.8) }],
        },
      });
      assert.equal(changed.status, 200, changed.text);
      assert.deepEqual(changed.body.signing, { levelAchieved: 'B-T', fellBack: false });

      await assertSignaturesValid(await writeMainFile(server, admin, doc.documentId, space), 3);
      await setLevel(server, admin, null);
    });

    it('should TSA_URL go away after B-T was set, calls fall back to B-B and say so', async () => {
      assert.equal((await setLevel(server, admin, 'B-T')).status, 200);
      const node = await startServer({ sameStoreAs: server });
      try {
        const sealed = await sealNewDocument(node, admin);
        assert.equal(sealed.status, 200, sealed.text);
        assert.equal(sealed.body.levelAchieved, 'B-B');
        assert.equal(sealed.body.fellBack, true);
        assert.match(sealed.body.reason, /time-stamp authority/i);
      } finally {
        await node.close();
        await setLevel(server, admin, null);
      }
    });
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { verifyFile } from '../../src/ops/verify-file.js';
import { pem } from '../../src/pki/dev-ca.js';
import { workspace, type Workspace } from '../pdf/oracles.js';
import { replacePageContent, tamperPadding } from '../helpers/after-signing.js';
import { aDocument, aSignedDocument, mainFileOf, readDocument, signDocument } from '../helpers/documents.js';
import { mustSucceed, type ApiResponse, type TestServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

const SIGNATURE = {
  type: 'signature',
  pages: [1],
  position: { percentX: 0.1, percentY: 0.8, percentWidth: 0.2, percentHeight: 0.05 },
};

function publicVerify(server: TestServer, bytes: Uint8Array): Promise<ApiResponse> {
  return server.api('POST', '//verify', {
    form: { file: { name: 'file.pdf', type: 'application/pdf', bytes: Buffer.from(bytes) } },
  });
}

/** `signery verify` in its own process, with the installation's roots: exit status and JSON report. */
function signeryVerify(path: string, root: string) {
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', 'verify', path, '--trust', root],
    {
      env: { PATH: process.env.PATH ?? '' },
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  return { status: run.status, report: run.stdout ? JSON.parse(run.stdout) : undefined, stderr: run.stderr };
}

/**
 * Issue 38, Deliver 1: "The API, POST /verify, the public page and signery verify call the same
 * function for the headline". Every reproduction is judged by all of them, through real HTTP.
 */
describe('one verdict from GET /documents/:id/verify, POST /verify and signery verify', () => {
  const server = useServer();
  let token: string;
  let trustAnchors: Uint8Array[];
  let space: Workspace;
  let signedId: string;
  let signed: Buffer;

  /** What every verifier in this process says of `bytes` (and of the stored document `id`, when given). */
  async function headlines(bytes: Uint8Array, id?: string) {
    const posted = await publicVerify(server, bytes);
    assert.equal(posted.status, 200, posted.text);
    const cli = await verifyFile(bytes, { trustAnchors });
    const stored = id ? (await server.api('GET', `/documents/${id}/verify`, { token })).body : undefined;
    return { posted: posted.body, cli, stored };
  }

  before(async () => {
    token = await server.adminToken();
    trustAnchors = (await server.app.deps.seal()).trustAnchors;
    space = await workspace();
    signedId = await aSignedDocument(server, token, {
      pdf: { lines: ['The buyer pays EUR 10,000.00'] },
      signatures: [SIGNATURE],
    });
    signed = await mainFileOf(server, token, signedId);
  });

  it('a genuine signed document is valid everywhere', async () => {
    const { posted, cli, stored } = await headlines(signed, signedId);
    assert.equal(stored.verdict.headline, 'valid', JSON.stringify(stored.verdict));
    assert.equal(posted.verdict.headline, 'valid');
    assert.equal(cli.verdict, 'valid');
    assert.deepEqual(
      stored.signatures.map((s: { verdict: string }) => s.verdict),
      ['valid'],
    );
  });

  it('reproduction 1: page 1 replaced after signing, then signed again by another document: changed, naming the first signature, in all verifiers and the CLI process', async () => {
    const attacked = await replacePageContent(signed, 'The buyer pays EUR 10.00');
    const id = await aDocument(server, token, { pdf: Buffer.from(attacked) });
    mustSucceed(await signDocument(server, token, id, [SIGNATURE]), 'PUT /documents/sign');
    const resigned = await mainFileOf(server, token, id);
    const { posted, cli, stored } = await headlines(resigned, id);
    const first = posted.signatures[0].fieldName as string;
    for (const verdict of [
      stored.verdict,
      posted.verdict,
      { headline: cli.verdict, signature: cli.signature },
    ]) {
      assert.equal(verdict.headline, 'changed', JSON.stringify(verdict));
      assert.equal(verdict.signature, first);
    }
    const change = posted.signatures[0].modifications.find((m: { kind: string }) => m.kind === 'other');
    assert.equal(change.description, "Page 1's content was replaced");
    assert.deepEqual(change.pages, [1]);

    const root = await space.write('root.pem', pem('CERTIFICATE', trustAnchors[0]!));
    const run = signeryVerify(await space.write('resigned.pdf', resigned), root);
    assert.equal(run.status, 1, run.stderr);
    assert.equal(run.report.verdict, 'changed');
    assert.equal(run.report.signature, first);
    const good = signeryVerify(await space.write('signed.pdf', signed), root);
    assert.equal(good.status, 0, JSON.stringify(good.report));
    assert.equal(good.report.verdict, 'valid');
  });

  it('reproduction 2: an opaque text annotation over the signed amount, then a seal: changed, an annotation covering signed content', async () => {
    const id = await aSignedDocument(server, token, {
      pdf: { lines: ['The buyer pays EUR 10,000.00'] },
      signatures: [SIGNATURE],
    });
    let version = (await readDocument(server, token, id))._version as number;
    mustSucceed(
      await server.api('PUT', `/documents/annotate/${version}`, {
        token,
        body: {
          id,
          annotations: [
            {
              text: 'The buyer pays EUR 100,000.00 on signature.',
              pages: [1],
              position: { percentX: 0.1, percentY: 0.07, percentWidth: 0.6, percentHeight: 0.06 },
              backgroundColor: '#FFFFFFFF',
            },
          ],
        },
      }),
      'PUT /documents/annotate',
    );
    version = (await readDocument(server, token, id))._version as number;
    mustSucceed(
      await server.api('PUT', `/documents/seal/${version}`, { token, body: { id, certificate: true } }),
      'PUT /documents/seal',
    );
    const bytes = await mainFileOf(server, token, id);
    const { posted, cli, stored } = await headlines(bytes, id);
    for (const headline of [stored.verdict.headline, posted.verdict.headline, cli.verdict])
      assert.equal(headline, 'changed');
    const annotation = stored.signatures[0].modifications.find(
      (m: { kind: string }) => m.kind === 'annotation',
    );
    assert.equal(annotation.coversSignedContent, true, JSON.stringify(stored.signatures[0].modifications));
    assert.deepEqual(annotation.pages, [1]);
    assert.equal(stored.signatures.at(-1).verdict, 'valid', 'the seal itself covers what it signed');
  });

  it('reproduction 3: 12 hex digits changed in the zero padding of /Contents: invalid for every verifier', async () => {
    const posted = await publicVerify(server, signed);
    const tampered = tamperPadding(signed, posted.body.signatures[0].byteRange[2]);
    const verdicts = await headlines(tampered);
    assert.equal(verdicts.posted.verdict.headline, 'invalid');
    assert.equal(verdicts.cli.verdict, 'invalid');
    assert.equal(verdicts.posted.signatures[0].verdict, 'invalid');
  });
});

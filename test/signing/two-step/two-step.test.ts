import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash, type KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import * as graphene from 'graphene-pk11';
import { ManualClock } from '../../../src/base/clock.js';
import { createTestPki, digestInfo, rsaToken, type TestPki } from '../../fixtures/test-pki.js';
import { startTestTsa } from '../../fixtures/tsa-server.js';
import { makePdf, PNG_1PX } from '../../helpers/pdf.js';
import { createUser, startServer, upload, type TestServer } from '../../helpers/server.js';
import { aUser } from '../../helpers/people.js';
import { useServer } from '../../helpers/use-server.js';
import { hasTool, pdfsig, tool, workspace, type Workspace } from '../../pdf/oracles.js';

const run = promisify(execFile);
const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.08 });
// Lines of 64 characters and no empty line before END (OpenSSL refuses one), whatever the length.
const pem = (der: Uint8Array) =>
  `-----BEGIN CERTIFICATE-----\n${(
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? []
  ).join('\n')}\n-----END CERTIFICATE-----\n`;
const sha256hex = (der: Uint8Array) => createHash('sha256').update(der).digest('hex');

const SOFTHSM = ['/usr/lib/softhsm/libsofthsm2.so', '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so'].find(
  (p) => existsSync(p),
);

describe('two-step signing with hardware keys (spec: Two-step signing session) and personal certificates', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({ clock });
  let pki: TestPki;
  let space: Workspace;
  let signerId: string;
  let signer: string;
  let other: string;
  let rsa: { certificate: Uint8Array; chain: Uint8Array[]; privateKey: KeyObject };
  let ec: { certificate: Uint8Array; chain: Uint8Array[]; privateKey: KeyObject };

  before(async () => {
    pki = await createTestPki();
    space = await workspace();
    signerId = await createUser(server, { name: 'hana', displayName: 'Hana Hardware' });
    other = (await aUser(server, { name: 'otto' })).token;
    signer = await server.login('hana', 'user-password-1');
    rsa = await pki.signer({ name: 'Hana Hardware RSA', key: 'RSA' });
    ec = await pki.signer({ name: 'Hana Hardware P-256', key: 'ECDSA' });
  });
  after(async () => {
    await space.remove();
  });

  const sendCertificate = async (bytes: Buffer | string, token = signer) => {
    const form = new FormData();
    form.append('file', new Blob([bytes]), 'certificate.pem');
    const response = await fetch(`${server.url}/api/v1/users/${signerId}/certificate?token=${token}`, {
      method: 'POST',
      body: form,
    });
    const text = await response.text();
    return { status: response.status, text, body: JSON.parse(text) };
  };
  const addCertificate = (certificate: Uint8Array, chain: Uint8Array[], token = signer) =>
    sendCertificate(pem(certificate) + chain.map(pem).join(''), token);
  const newDoc = async (title: string) => {
    const pdf = await upload(server, signer, makePdf({ pages: 2 }));
    const created = await server.api('POST', '/documents', {
      token: signer,
      body: { body: { documentTitle: title, pdfFile: { content: pdf } } },
    });
    assert.equal(created.status, 200, created.text);
    return created.body.results[0].documentId as string;
  };
  const read = async (id: string) =>
    (await server.api('GET', `/documents/${id}`, { token: signer })).body.results[0];
  const download = async (fileId: string) =>
    Buffer.from(
      await (await fetch(`${server.url}/api/v1/files/loadFile/hash/${fileId}?token=${signer}`)).arrayBuffer(),
    );
  const start = (id: string, certificate: Uint8Array, extra: Record<string, unknown> = {}, mode = 'digest') =>
    server.api('POST', `/documents/sign/1/start/${mode}`, {
      token: signer,
      body: {
        id,
        certificateHash: sha256hex(certificate),
        signatureProvider: 'internalUsb',
        signatures: [{ type: 'signature', pages: [1], position: at(0.1, 0.8) }],
        ...extra,
      },
    });
  const finish = (sessionId: string, originalDigest: string, signedDigest: Buffer, token = signer) =>
    server.api('PUT', '/documents/sign/finish/digest', {
      token,
      body: { sessionId, signedDigests: [{ originalDigest, signedDigest: signedDigest.toString('base64') }] },
    });
  async function assertSignedAndValid(id: string, count: number) {
    const doc = await read(id);
    assert.equal(doc.isSigned, true);
    const path = await space.write(`${id}-${doc._version}.pdf`, await download(doc.pdfFile.content));
    if (!hasTool('pdfsig')) return;
    const verdicts = await pdfsig(path);
    assert.equal(verdicts.length, count);
    for (const v of verdicts) assert.equal(v.validation, 'Signature is Valid.', v.raw);
    if (hasTool('qpdf'))
      assert.match(await tool('qpdf', ['--check', path]), /No syntax or stream encoding errors found/);
  }

  /** The hardware client for ECDSA: openssl signs the digest as is (no hashing), answering DER. */
  const ecToken = (key: KeyObject) => async (digest: Buffer) => {
    const keyPath = await space.write('ec-key.pem', key.export({ type: 'pkcs8', format: 'pem' }));
    const input = await space.write('digest.bin', digest);
    const output = join(space.dir, 'signature.der');
    await run('openssl', ['pkeyutl', '-sign', '-inkey', keyPath, '-in', input, '-out', output]);
    return readFile(output);
  };

  it('POST /users/{id}/certificate (multipart PEM or DER with its chain) answers {id, subject, issuer, notBefore, notAfter}; the user lists it; DELETE removes it', async () => {
    const added = await addCertificate(rsa.certificate, rsa.chain);
    assert.equal(added.status, 200, added.text);
    assert.equal(added.body.id, sha256hex(rsa.certificate));
    for (const key of ['subject', 'issuer', 'notBefore', 'notAfter'])
      assert.equal(typeof added.body[key], 'string');
    assert.equal(added.body.keyAlgorithm, 'RSA');
    assert.equal(added.body.chainLength, rsa.chain.length);
    assert.match(added.body.subject, /CN=Hana Hardware RSA/);

    const again = await addCertificate(rsa.certificate, []);
    assert.equal(again.status, 409, again.text);
    const garbage = await sendCertificate('not a certificate');
    assert.equal(garbage.status, 400);
    assert.equal(garbage.body.code, 'VALIDATION_ERROR');
    assert.match(garbage.body.message, /"file" must be a PEM or DER X\.509 certificate/);
    // Someone else's account does not exist for a non-administrator.
    assert.equal((await addCertificate(ec.certificate, [], other)).status, 404);

    // DER is accepted too (certificates one after another), and an administrator may add one for a
    // user they manage.
    const der = await sendCertificate(
      Buffer.concat([ec.certificate, ...ec.chain].map((c) => Buffer.from(c))),
      await server.adminToken(),
    );
    assert.equal(der.status, 200, der.text);
    assert.equal(der.body.keyAlgorithm, 'ECDSA');
    assert.equal(der.body.chainLength, ec.chain.length);

    const me = await server.api('GET', `/users/${signerId}`, { token: signer });
    assert.deepEqual(
      me.body.certificates.map((c: { id: string }) => c.id).sort(),
      [sha256hex(rsa.certificate), sha256hex(ec.certificate)].sort(),
    );
    const login = await server.api('GET', '/login', { token: signer });
    assert.equal(login.body.user.certificates.length, 2);

    const removed = await server.api(
      'DELETE',
      `/users/${signerId}/certificate/${sha256hex(ec.certificate)}`,
      {
        token: signer,
      },
    );
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(removed.body, { status: 'SUCCESS' });
    const gone = await server.api('DELETE', `/users/${signerId}/certificate/${sha256hex(ec.certificate)}`, {
      token: signer,
    });
    assert.equal(gone.status, 404);
    assert.equal(
      (await server.api('GET', `/users/${signerId}`, { token: signer })).body.certificates.length,
      1,
    );
    assert.equal((await addCertificate(ec.certificate, ec.chain)).status, 200);
  });

  for (const algorithm of ['SHA-256', 'SHA-384', 'SHA-512'] as const) {
    it(`RSA software key, ${algorithm}: start/digest places the visual, the token signs the digest, finish embeds it; pdfsig says valid`, async () => {
      const id = await newDoc(`RSA ${algorithm}`);
      const before = await read(id);
      const started = await start(id, rsa.certificate, {
        digestAlgorithm: algorithm,
        signatures: [
          {
            type: 'signature',
            blob: await upload(server, signer, PNG_1PX, {
              path: '/files/signature',
              name: 's.png',
              type: 'image/png',
            }),
            pages: [1],
            position: at(0.1, 0.8),
          },
        ],
      });
      assert.equal(started.status, 200, started.text);
      const { files, sessionId, sessionExpiration } = started.body;
      assert.match(sessionId, /^tss_/);
      assert.equal(new Date(sessionExpiration).getTime(), clock.now().getTime() + 15 * 60_000);
      assert.equal(files.length, 1);
      const digest = Buffer.from(files[0].digest, 'base64');
      assert.equal(digest.length, { 'SHA-256': 32, 'SHA-384': 48, 'SHA-512': 64 }[algorithm]);
      // Starting changes nothing yet; the prepared file is the caller's to read.
      assert.equal((await read(id))._version, before._version);
      const prepared = await download(files[0].preparedFile);
      assert.match(prepared.toString('latin1'), /\/SubFilter\s*\/ETSI\.CAdES\.detached/);

      const finished = await finish(sessionId, files[0].digest, rsaToken(rsa.privateKey, algorithm)(digest));
      assert.equal(finished.status, 200, finished.text);
      assert.equal(finished.body.status, 'ok');
      assert.equal(finished.body.levelAchieved, 'B-B');
      assert.equal(finished.body._version, before._version + 1);
      await assertSignedAndValid(id, 1);
      // The signed file starts with the prepared one: only /Contents was filled in.
      const signedBytes = await download((await read(id)).pdfFile.content);
      assert.equal(signedBytes.length, prepared.length);

      const twice = await finish(sessionId, files[0].digest, rsaToken(rsa.privateKey, algorithm)(digest));
      assert.equal(twice.status, 409);
      assert.equal(twice.body.code, 'SESSION_FINISHED');
    });
  }

  it('ECDSA P-256 software key: the token answers DER over the raw digest; pdfsig says valid', async () => {
    const id = await newDoc('ECDSA');
    const started = await start(id, ec.certificate, { signatureProvider: 'internalNfc' });
    assert.equal(started.status, 200, started.text);
    const { files, sessionId } = started.body;
    const value = await ecToken(ec.privateKey)(Buffer.from(files[0].digest, 'base64'));
    assert.equal(value[0], 0x30);
    const finished = await finish(sessionId, files[0].digest, value);
    assert.equal(finished.status, 200, finished.text);
    await assertSignedAndValid(id, 1);
  });

  it('a share’s fields hold in two steps as in one: start refuses a required field left out or an answer out of range, and writes a good one', async () => {
    const pdf = await upload(server, other, makePdf({ pages: 1 }));
    const created = await server.api('POST', '/documents', {
      token: other,
      body: { body: { documentTitle: 'Two-step with fields', pdfFile: { content: pdf } } },
    });
    assert.equal(created.status, 200, created.text);
    const id = created.body.results[0].documentId as string;
    const amount = {
      type: 'annotation',
      subtype: 'annotation_number',
      customId: 'amount',
      user: ['hana'],
      pages: [1],
      position: at(0.5, 0.3),
      required: true,
      config: JSON.stringify({ min: 0, max: 10 }),
    };
    const shared = await server.api('POST', '/share', {
      token: other,
      body: {
        id,
        data: [{ sharePurpose: 'sign', shareTo: 'hana' }],
        // Her signature's field: recipients draw only in their fields, in two steps too (issue 40).
        signatureFields: [amount, { type: 'signature', user: ['hana'], pages: [1], position: at(0.1, 0.8) }],
      },
    });
    assert.equal(shared.status, 200, shared.text);
    // Hana's P-256 certificate, added by the first test (or now, when this test runs alone).
    assert.ok([200, 409].includes((await addCertificate(ec.certificate, ec.chain)).status));
    const version = (await read(id))._version as number;
    const startShared = (more: Record<string, unknown> = {}) =>
      server.api('POST', `/documents/sign/${version}/start/digest`, {
        token: signer,
        body: {
          id,
          certificateHash: sha256hex(ec.certificate),
          signatureProvider: 'internalNfc',
          signatures: [{ type: 'signature', pages: [1], position: at(0.1, 0.8) }],
          ...more,
        },
      });
    const answer = (text: string) => ({
      annotations: [{ fieldId: 'amount', text, pages: [1], position: at(0.5, 0.3) }],
    });

    const unanswered = await startShared();
    assert.equal(unanswered.status, 400, unanswered.text);
    assert.match(unanswered.body.message, /amount/);
    const tooMuch = await startShared(answer('11'));
    assert.equal(tooMuch.status, 400, tooMuch.text);
    assert.match(tooMuch.body.message, /amount/);

    const started = await startShared(answer('7'));
    assert.equal(started.status, 200, started.text);
    const { files, sessionId } = started.body;
    const value = await ecToken(ec.privateKey)(Buffer.from(files[0].digest, 'base64'));
    assert.equal((await finish(sessionId, files[0].digest, value)).status, 200);
    const doc = (await server.api('GET', `/documents/${id}`, { token: other })).body.results[0];
    assert.equal(doc.workflow.shareStateName, 'completed');
    if (hasTool('mutool')) {
      const path = await space.write(`${id}.pdf`, await download(doc.pdfFile.content));
      assert.match(await tool('mutool', ['draw', '-F', 'txt', path, '1']), /\b7\b/, 'the answer is written');
    }
  });

  it('stateless between requests (DESIGN): a second node over the same database and files finishes a session the first started', async () => {
    const id = await newDoc('Two nodes');
    const started = await start(id, rsa.certificate);
    assert.equal(started.status, 200, started.text);
    const second = await startServer({ clock, sameStoreAs: server });
    try {
      const { files, sessionId } = started.body;
      const value = rsaToken(rsa.privateKey, 'SHA-256')(Buffer.from(files[0].digest, 'base64'));
      const finished = await second.api('PUT', '/documents/sign/finish/digest', {
        token: signer,
        body: {
          sessionId,
          signedDigests: [{ originalDigest: files[0].digest, signedDigest: value.toString('base64') }],
        },
      });
      assert.equal(finished.status, 200, finished.text);
    } finally {
      await second.close();
    }
    await assertSignedAndValid(id, 1);
  });

  /** Starts a session on `node` and signs its digest with the EC key; the call that finishes it. */
  const signOnNode = async (node: TestServer, id: string) => {
    const started = await node.api('POST', '/documents/sign/1/start/digest', {
      token: signer,
      body: { id, certificateHash: sha256hex(ec.certificate), signatureProvider: 'internalUsb' },
    });
    assert.equal(started.status, 200, started.text);
    const { files, sessionId } = started.body;
    const value = await ecToken(ec.privateKey)(Buffer.from(files[0].digest, 'base64'));
    return () =>
      node.api('PUT', '/documents/sign/finish/digest', {
        token: signer,
        body: {
          sessionId,
          signedDigests: [{ originalDigest: files[0].digest, signedDigest: value.toString('base64') }],
        },
      });
  };

  it('with TSA_URL the finished signature carries a timestamp from the TSA (PAdES B-T)', async () => {
    const tsa = await startTestTsa(await pki.tsa());
    const node = await startServer({ clock, sameStoreAs: server, env: { TSA_URL: tsa.url } });
    try {
      const id = await newDoc('Timestamped');
      const finished = await (await signOnNode(node, id))();
      assert.equal(finished.status, 200, finished.text);
      assert.equal(finished.body.levelAchieved, 'B-T');
      assert.equal(tsa.requests, 1);
      await assertSignedAndValid(id, 1);
      if (hasTool('pdfsig')) {
        const doc = await read(id);
        const path = await space.write(`${id}-tsa.pdf`, await download(doc.pdfFile.content));
        assert.match((await pdfsig(path))[0]!.raw, /Signature Type: ETSI\.CAdES\.detached/);
      }
    } finally {
      await node.close();
      await tsa.close();
    }
  });

  it('DESIGN: the finish waits for the TSA with no transaction open; another user’s document create goes on meanwhile', async () => {
    const tsa = await startTestTsa(await pki.tsa());
    const node = await startServer({ clock, sameStoreAs: server, env: { TSA_URL: tsa.url } });
    try {
      const id = await newDoc('Finished while the TSA holds');
      const finish = await signOnNode(node, id);
      tsa.hold();
      const finishing = finish();
      try {
        await tsa.held(1);
        // On SQLite a transaction held open across the TSA call would keep this writer waiting.
        const content = await upload(node, other, makePdf());
        const created = await node.api('POST', '/documents', {
          token: other,
          body: { body: { documentTitle: 'Written meanwhile', pdfFile: { content } } },
        });
        assert.equal(created.status, 200, created.text);
        const pending = Symbol('pending');
        assert.equal(await Promise.race([finishing, Promise.resolve(pending)]), pending, 'the finish waits');
      } finally {
        tsa.release();
      }
      const finished = await finishing;
      assert.equal(finished.status, 200, finished.text);
      assert.deepEqual([finished.body.levelAchieved, finished.body._version], ['B-T', 2]);
    } finally {
      await node.close();
      await tsa.close();
    }
  });

  it('a wrong signature value, or a value from a key that does not match the certificate, is refused and changes nothing', async () => {
    const id = await newDoc('Refused');
    const before = await read(id);
    const started = await start(id, rsa.certificate);
    const { files, sessionId } = started.body;
    const digest = Buffer.from(files[0].digest, 'base64');

    const wrongValue = rsaToken(rsa.privateKey, 'SHA-256')(createHash('sha256').update('other').digest());
    const refused = await finish(sessionId, files[0].digest, wrongValue);
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.code, 'VALIDATION_ERROR');
    assert.match(refused.body.message, /signature/i);

    const stranger = await pki.signer({ name: 'Not Hana', key: 'RSA' });
    const mismatch = await finish(
      sessionId,
      files[0].digest,
      rsaToken(stranger.privateKey, 'SHA-256')(digest),
    );
    assert.equal(mismatch.status, 400, mismatch.text);

    const unknownDigest = await finish(sessionId, Buffer.alloc(32, 7).toString('base64'), wrongValue);
    assert.equal(unknownDigest.status, 400);
    assert.match(unknownDigest.body.message, /"signedDigests" has no entry whose "originalDigest"/);

    const after = await read(id);
    assert.equal(after._version, before._version);
    assert.equal(after.pdfFile.content, before.pdfFile.content);
    assert.equal(after.isSigned, false);

    // Another user cannot see the session at all.
    const foreign = await finish(
      sessionId,
      files[0].digest,
      rsaToken(rsa.privateKey, 'SHA-256')(digest),
      other,
    );
    assert.equal(foreign.status, 404);

    // The refusals left the session open: the right value still finishes it.
    const finished = await finish(sessionId, files[0].digest, rsaToken(rsa.privateKey, 'SHA-256')(digest));
    assert.equal(finished.status, 200, finished.text);
  });

  it('an expired session is refused with 410 SESSION_EXPIRED, and a document changed since the start with 409', async () => {
    const id = await newDoc('Expiring');
    const started = await start(id, rsa.certificate);
    const { files, sessionId } = started.body;
    const value = rsaToken(rsa.privateKey, 'SHA-256')(Buffer.from(files[0].digest, 'base64'));
    clock.advance(15 * 60_000 + 1);
    const expired = await finish(sessionId, files[0].digest, value);
    assert.equal(expired.status, 410, expired.text);
    assert.equal(expired.body.code, 'SESSION_EXPIRED');
    assert.equal((await read(id)).isSigned, false);

    const next = await start(id, rsa.certificate);
    assert.equal(next.status, 200, next.text);
    const signedElsewhere = await server.api('PUT', '/documents/sign/1', {
      token: signer,
      body: { id, signatures: [{ type: 'signature', pages: [1], position: at(0.5, 0.5) }] },
    });
    assert.equal(signedElsewhere.status, 200, signedElsewhere.text);
    const late = await finish(
      next.body.sessionId,
      next.body.files[0].digest,
      rsaToken(rsa.privateKey, 'SHA-256')(Buffer.from(next.body.files[0].digest, 'base64')),
    );
    assert.equal(late.status, 409, late.text);
    assert.equal(late.body.code, 'VERSION_MISMATCH');
  });

  it('start refuses other providers, unknown certificates and a stale version with the Contract’s errors', async () => {
    const id = await newDoc('Start errors');
    const provider = await start(id, rsa.certificate, { signatureProvider: 'internal' });
    assert.equal(provider.status, 400);
    assert.match(provider.body.message, /"signatureProvider" must be one of/);
    const digestAlgorithm = await start(id, rsa.certificate, { digestAlgorithm: 'MD5' });
    assert.equal(digestAlgorithm.status, 400);
    assert.match(digestAlgorithm.body.message, /"digestAlgorithm"/);
    const unknown = await start(id, (await pki.signer({ name: 'Unknown' })).certificate);
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.message, /"certificateHash" must name one of your certificates/);
    const stale = await server.api('POST', '/documents/sign/7/start/digest', {
      token: signer,
      body: { id, certificateHash: sha256hex(rsa.certificate), signatureProvider: 'internalUsb' },
    });
    assert.equal(stale.status, 409);
    const notVisible = await server.api('POST', '/documents/sign/1/start/digest', {
      token: other,
      body: { id, certificateHash: sha256hex(rsa.certificate), signatureProvider: 'internalUsb' },
    });
    assert.equal(notVisible.status, 404);
  });

  it('start/file and finish/file: openssl signs the prepared file’s byte ranges; only /Contents may differ', async () => {
    const id = await newDoc('Whole file');
    const started = await start(id, rsa.certificate, {}, 'file');
    assert.equal(started.status, 200, started.text);
    const { files, sessionId } = started.body;
    const prepared = await download(files[0].preparedFile);
    const text = prepared.toString('latin1');
    const [a, b, c, d] = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/
      .exec(text)!
      .slice(1)
      .map(Number) as [number, number, number, number];
    const covered = Buffer.concat([prepared.subarray(a, a + b), prepared.subarray(c, c + d)]);
    assert.equal(createHash('sha256').update(covered).digest('base64'), files[0].digest);

    // The client: a detached CMS over the byte ranges, made by openssl with the user's key.
    const content = await space.write('covered.bin', covered);
    const cert = await space.write('rsa.pem', pem(rsa.certificate));
    const key = await space.write('rsa-key.pem', rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const cmsPath = join(space.dir, 'cms.der');
    await run('openssl', [
      'cms',
      '-sign',
      '-binary',
      '-nosmimecap',
      '-md',
      'sha256',
      '-outform',
      'DER',
      '-in',
      content,
      '-signer',
      cert,
      '-inkey',
      key,
      '-out',
      cmsPath,
    ]);
    const cms = await readFile(cmsPath);
    const hex = cms.toString('hex');
    const slot = c - (a + b) - 2;
    assert.ok(hex.length <= slot);
    const signed = Buffer.from(prepared);
    signed.write(hex, a + b + 1, 'latin1');

    const tampered = Buffer.from(signed);
    tampered[10] = tampered[10]! ^ 1;
    const send = (bytes: Buffer, session = sessionId) => {
      const form = new FormData();
      form.append('sessionId', session);
      form.append('file', new Blob([bytes], { type: 'application/pdf' }), 'signed.pdf');
      return fetch(`${server.url}/api/v1/documents/sign/finish/file?token=${signer}`, {
        method: 'PUT',
        body: form,
      });
    };
    const refused = await send(tampered);
    assert.equal(refused.status, 400);
    assert.match(((await refused.json()) as { message: string }).message, /differs from the prepared file/);
    assert.equal((await read(id)).isSigned, false);

    const accepted = await send(signed);
    assert.equal(accepted.status, 200, await accepted.clone().text());
    assert.equal(((await accepted.json()) as { status: string }).status, 'ok');
    await assertSignedAndValid(id, 1);
  });

  describe(
    'a key inside a PKCS#11 token (SoftHSM)',
    {
      skip:
        !hasTool('softhsm2-util') || !SOFTHSM
          ? 'softhsm2 is not installed (apt-get install softhsm2)'
          : false,
    },
    () => {
      const PIN = '4321';
      let module: graphene.Module;
      let session: graphene.Session;
      const hsm: Record<string, { certificate: Uint8Array; chain: Uint8Array[] }> = {};

      before(async () => {
        await mkdir(join(space.dir, 'tokens'));
        process.env.SOFTHSM2_CONF = await space.write(
          'softhsm2.conf',
          `directories.tokendir = ${space.dir}/tokens\nobjectstore.backend = file\nlog.level = ERROR\n`,
        );
        await run('softhsm2-util', [
          '--init-token',
          '--free',
          '--label',
          'hana',
          '--so-pin',
          '1234',
          '--pin',
          PIN,
        ]);
        for (const [i, key] of (['RSA', 'ECDSA'] as const).entries()) {
          const made = await pki.signer({ name: `Hana token ${key}`, key });
          const keyFile = await space.write(
            `hsm-${key}.pem`,
            made.privateKey.export({ type: 'pkcs8', format: 'pem' }),
          );
          await run('softhsm2-util', [
            '--import',
            keyFile,
            '--token',
            'hana',
            '--label',
            `hana-${key}`,
            '--id',
            `0${i + 1}`,
            '--pin',
            PIN,
          ]);
          hsm[key] = { certificate: made.certificate, chain: made.chain };
          assert.equal((await addCertificate(made.certificate, made.chain)).status, 200);
        }
        module = graphene.Module.load(SOFTHSM!, 'softhsm');
        module.initialize();
        session = module.getSlots(true).items(0).open(graphene.SessionFlag.SERIAL_SESSION);
        session.login(PIN);
      });
      after(() => {
        session.logout();
        session.close();
        module.finalize();
      });

      const tokenKey = (label: string) => {
        const key = session.find({ class: graphene.ObjectClass.PRIVATE_KEY, label }).items(0);
        assert.ok(key, `the token holds ${label}`);
        return key.toType<graphene.PrivateKey>();
      };

      it('RSA inside the token (CKM_RSA_PKCS over DigestInfo, SHA-512): pdfsig says valid', async () => {
        const id = await newDoc('HSM RSA');
        const started = await start(id, hsm.RSA!.certificate, { digestAlgorithm: 'SHA-512' });
        assert.equal(started.status, 200, started.text);
        const { files, sessionId } = started.body;
        const value = session
          .createSign('RSA_PKCS', tokenKey('hana-RSA'))
          .once(digestInfo('SHA-512', Buffer.from(files[0].digest, 'base64')));
        const finished = await finish(sessionId, files[0].digest, value);
        assert.equal(finished.status, 200, finished.text);
        await assertSignedAndValid(id, 1);
      });

      it('ECDSA inside the token (CKM_ECDSA, raw r||s answer): pdfsig says valid', async () => {
        const id = await newDoc('HSM ECDSA');
        const started = await start(id, hsm.ECDSA!.certificate);
        const { files, sessionId } = started.body;
        const value = session
          .createSign('ECDSA', tokenKey('hana-ECDSA'))
          .once(Buffer.from(files[0].digest, 'base64'));
        assert.equal(value.length, 64);
        const finished = await finish(sessionId, files[0].digest, value);
        assert.equal(finished.status, 200, finished.text);
        await assertSignedAndValid(id, 1);
      });
    },
  );
});

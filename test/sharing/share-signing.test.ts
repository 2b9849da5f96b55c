import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertSignaturesValid, useWorkspace } from '../pdf/oracles.js';
import { PNG_1PX } from '../helpers/pdf.js';
import {
  aDocument,
  eventsOf,
  fileUsedBy,
  readDocument,
  signDocument,
  writeMainFile,
} from '../helpers/documents.js';
import { anOwnerAndTwoSigners } from '../helpers/people.js';
import { linkOf, shareDocument, signByLink } from '../helpers/sharing.js';
import { upload, USER_PASSWORD } from '../helpers/server.js';
import { assertBodyInvalid } from '../helpers/api-errors.js';
import { auditOf } from '../helpers/audit-log.js';
import { useServer } from '../helpers/use-server.js';

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.2, percentHeight: 0.06 });
const signatureAt = (x: number) => [{ type: 'signature', position: at(x, 0.85) }];

describe('parallel signing by three recipients, and the sharer signing in POST /share (DESIGN "Signing inside other calls")', () => {
  const server = useServer({ smtp: true });
  const smtp = server.smtp;
  const space = useWorkspace();
  let owner: string;
  before(async () => (owner = await anOwnerAndTwoSigners(server)));

  const newDoc = (title: string) => aDocument(server, owner, { title, pdf: { pages: 2 } });
  const read = (id: string) => readDocument(server, owner, id);
  /** pdfsig and qpdf on the document's main file as it is now. */
  const assertAllValid = async (id: string, count: number) =>
    assertSignaturesValid(await writeMainFile(server, owner, id, space), count, { qpdf: true });
  const events = (id: string) => eventsOf(server, id);
  const signAsUser = async (name: string, id: string, x: number) =>
    signDocument(server, await server.login(name, USER_PASSWORD), id, signatureAt(x), owner);
  const signByLinkAt = (token: string, id: string, x: number) =>
    signByLink(server, token, id, signatureAt(x));

  it('parallel: three recipients (two users, one e-mail recipient) all get their turn at once, sign in any order, and the document completes; pdfsig says every signature is valid', async () => {
    const id = await newDoc('Parallel three');
    const shares = await shareDocument(server, owner, id, {
      to: ['ivy', 'par@example.org', 'jon'].map((shareTo) => ({ sharePurpose: 'sign', shareTo })),
    });
    assert.deepEqual(
      shares.map((s: { status: string }) => s.status),
      ['active', 'active', 'active'],
      'nobody waits for a turn',
    );
    assert.deepEqual((await read(id)).waitingFor, ['ivy', 'par@example.org', 'jon']);
    // Every recipient is told at once, the external one with their link.
    await smtp.waitFor('ivy@example.test', /Parallel three/);
    await smtp.waitFor('jon@example.test', /Parallel three/);
    const token = await linkOf(smtp, 'par@example.org', /Parallel three/);

    const jon = await signAsUser('jon', id, 0.7);
    assert.equal(jon.status, 200, jon.text);
    assert.equal(jon.body.shareStateName, 'inprogress');
    assert.deepEqual((await read(id)).waitingFor, ['ivy', 'par@example.org']);
    const external = await signByLinkAt(token, id, 0.4);
    assert.equal(external.status, 200, external.text);
    assert.deepEqual((await read(id)).waitingFor, ['ivy']);
    const ivy = await signAsUser('ivy', id, 0.1);
    assert.equal(ivy.status, 200, ivy.text);
    assert.equal(ivy.body.shareStateName, 'completed');

    const done = await read(id);
    assert.equal(done.workflow.shareStateName, 'completed');
    assert.deepEqual(done.waitingFor, []);
    // Three signers and the organisation seal made on completion (Contract: sealOnComplete).
    await assertAllValid(id, 4);
    const names = await events(id);
    assert.equal(names.filter((e) => e === 'documentSigned').length, 3);
    assert.equal(names.filter((e) => e === 'documentCompleted').length, 1);
  });

  it('root signatures: the sharer signs and shares in one step, before the shares go out; one change; pdfsig says valid', async () => {
    const id = await newDoc('Sharer signs first');
    const before = await read(id);
    const image = await upload(server, owner, PNG_1PX, { name: 'stamp.png', type: 'image/png' });
    const shares = await shareDocument(server, owner, id, {
      to: ['ivy', 'first@example.org'].map((shareTo) => ({ sharePurpose: 'sign', shareTo })),
      share: {
        signatures: [{ type: 'signature', position: at(0.05, 0.75) }],
        images: [{ blob: image, position: at(0.5, 0.1), pages: [1] }],
        annotations: [
          {
            text: 'Ref {{{documentId}}}',
            pages: [2],
            position: { percentX: 0.1, percentY: 0.1, percentWidth: 0.6, percentHeight: 0.05 },
          },
        ],
      },
    });
    assert.equal(shares.length, 2);
    const after = await read(id);
    assert.equal(after.isSigned, true);
    assert.notEqual(after.pdfFile.content, before.pdfFile.content, 'the main file has a new id');
    assert.equal(after._version, before._version + 1, 'signing and sharing are one change');
    assert.equal(after.workflow.shareStateName, 'inprogress');
    assert.deepEqual(after.waitingFor, ['ivy', 'first@example.org']);
    // Events of one transaction share their time; the audit log's sequence keeps the order of writing.
    const names = (await auditOf(server, id)).map((record) => record.activityType);
    assert.ok(
      names.indexOf('documentSigned') >= 0 &&
        names.indexOf('documentSigned') < names.indexOf('documentShared'),
      `the sharer’s signature comes before the request: ${names.join(', ')}`,
    );
    assert.ok((await events(id)).includes('signRequest'));
    await assertAllValid(id, 1);
    assert.equal(
      await fileUsedBy(server, image),
      `document:${id}`,
      'spec Files usage rule 3: the image is used now',
    );

    // The recipients sign on top of the sharer’s signature; every revision stays valid.
    const token = await linkOf(smtp, 'first@example.org', /Sharer signs first/);
    assert.equal((await signByLinkAt(token, id, 0.35)).status, 200);
    const last = await signAsUser('ivy', id, 0.65);
    assert.equal(last.body.shareStateName, 'completed', last.text);
    await assertAllValid(id, 4);
  });

  it('a failing root signature leaves nothing: no share, no mail, no new version, and its files stay unused', async () => {
    const id = await newDoc('Nothing left');
    const before = await read(id);
    const image = await upload(server, owner, PNG_1PX, { name: 'seal.png', type: 'image/png' });
    const mailJobs = async () =>
      Number(
        (
          await server.app.deps.db
            .selectFrom('jobs')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .where('type', '=', 'mail.send')
            .executeTakeFirstOrThrow()
        ).n,
      );
    /** POST /share with the sharer's signature and the image on `page`. */
    const shareSigned = (page: number) =>
      server.api('POST', '/share', {
        token: owner,
        body: {
          id,
          data: [{ sharePurpose: 'sign', shareTo: 'nothing@example.org' }],
          signatures: [{ type: 'signature', position: at(0.1, 0.8) }],
          images: [{ blob: image, position: at(0.5, 0.1), pages: [page] }],
        },
      });
    const mailsBefore = await mailJobs();
    const failed = await shareSigned(9);
    assert.equal(failed.status, 400, failed.text);
    assert.equal(failed.body.code, 'VALIDATION_ERROR');
    assert.match(failed.body.message, /"images\[0\]\.pages\[0\]"/);
    const shares = await server.app.deps.db
      .selectFrom('shares')
      .select('id')
      .where('document_id', '=', id)
      .execute();
    assert.equal(shares.length, 0, 'no share');
    assert.equal(await mailJobs(), mailsBefore, 'no mail');
    const unchanged = await read(id);
    assert.equal(unchanged._version, before._version);
    assert.equal(unchanged.pdfFile.content, before.pdfFile.content);
    assert.equal(unchanged.isSigned, false);
    assert.equal(unchanged.workflow.shareStateName ?? null, before.workflow.shareStateName ?? null);
    assert.equal(await fileUsedBy(server, image), null, 'the image was not used up');
    const tooFar = await server.api('POST', '/share', {
      token: owner,
      body: {
        id,
        data: [{ sharePurpose: 'sign', shareTo: 'nothing@example.org' }],
        signatures: [{ type: 'signature', position: { ...at(0.1, 0.8), percentX: 1.5 } }],
      },
    });
    assertBodyInvalid(tooFar, '"signatures[0].position.percentX" must be less than or equal to 1');

    // The same image works in a corrected call.
    const retried = await shareSigned(1);
    assert.equal(retried.status, 200, retried.text);
    assert.equal(await mailJobs(), mailsBefore + 1, 'the invitation');
    await smtp.waitFor('nothing@example.org', /Nothing left/);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hasTool, pdfsig, workspace, type Workspace } from '../pdf/oracles.js';
import { aDocument } from '../helpers/documents.js';
import { shareDocument } from '../helpers/sharing.js';
import { PNG_1PX } from '../helpers/pdf.js';
import { createUser, startServer, upload, type ApiResponse, type TestServer } from '../helpers/server.js';
import { shareTokenOf, startSmtp, type TestSmtp } from '../helpers/smtp.js';

const at = (x: number, y = 0.85) => ({ percentX: x, percentY: y, percentWidth: 0.2, percentHeight: 0.06 });
const png = { name: 'image.png', type: 'image/png', bytes: PNG_1PX };

/**
 * Issue 24 item 9: the workflow calls carry `signatures` and `images` as the sign calls do. spec Files,
 * usage rule 3: "In every sign, annotate, workflow-execute call, `signatures` entries must follow rule 2,
 * and each image in `images` must be an unused file from POST /files/saveFile (internal) or POST
 * /share/upload/file (external), or an existing document `barcode` file. … Affected: … POST /share,
 * POST /share/execute, PUT /share/document/sign/:version, PUT /share/reject, POST /inbox/action."
 */
describe('signatures and images in POST /share/execute, PUT /share/reject and POST /inbox/action follow Files usage rule 3', () => {
  let smtp: TestSmtp;
  let server: TestServer;
  let owner: string;
  let space: Workspace;
  before(async () => {
    smtp = await startSmtp();
    server = await startServer({ env: { SMTP_URL: smtp.url, PUBLIC_URL: 'https://sign.example.test' } });
    await createUser(server, { name: 'owner', email: 'owner@example.test' });
    await createUser(server, { name: 'ivy', email: 'ivy@example.test', displayName: 'Ivy Inbox' });
    owner = await server.login('owner', 'user-password-1');
    space = await workspace();
  });
  after(async () => {
    await server.close();
    await smtp.close();
    await space.remove();
  });

  /**
   * A new document of the owner's shared with `recipient` (and `others`); an external one's link from
   * the mail. These rules are about which files a recipient may draw, wherever they draw them: the
   * recipient has the share right `freePlacement` (without it they draw only in their fields, which
   * test/sharing/field-confinement.test.ts checks).
   */
  const aSharedDocument = async (
    title: string,
    recipient: Record<string, unknown>,
    others: Record<string, unknown>[] = [],
  ) => {
    const id = await aDocument(server, owner, { title, pdf: { pages: 2 } });
    const rights = [...((recipient.rights as string[] | undefined) ?? []), 'freePlacement'];
    const [share] = await shareDocument(server, owner, id, { to: [{ ...recipient, rights }, ...others] });
    const shareId = share.shareId as string | undefined;
    const to = recipient.shareTo as string;
    const link = to.includes('@') ? shareTokenOf(await smtp.waitFor(to, /\/s\/shr_/)) : undefined;
    return { id, shareId: shareId!, link };
  };
  /** POST /inbox/action as `token`'s user, an internal recipient. */
  const inboxAction = (token: string, body: Record<string, unknown>) =>
    server.api('POST', '/inbox/action', { token, body });
  const read = async (id: string) =>
    (await server.api('GET', `/documents/${id}`, { token: owner })).body.results[0];
  const shareStatus = async (shareId: string) =>
    (
      await server.app.deps.db
        .selectFrom('shares')
        .select('status')
        .where('id', '=', shareId)
        .executeTakeFirstOrThrow()
    ).status;
  /** The webhook events of the document since it was shared (their ids are random: sorted by name). */
  const eventsAfterSharing = async (id: string) =>
    (await server.app.deps.db.selectFrom('events').select('event').where('document_id', '=', id).execute())
      .map((e) => e.event)
      .filter((e) => e !== 'documentCreated' && e !== 'signRequest')
      .sort();
  /** The audit records of the document, in the order they were written. */
  const audit = async (id: string) =>
    await server.app.deps.db
      .selectFrom('audit_log')
      .select(['activity_type', 'actor_id'])
      .where('object_id', '=', id)
      .orderBy('seq')
      .execute();
  const shareUpload = async (link: string, what: 'signature' | 'file') => {
    const response = await server.api('POST', `/share/upload/${what}`, { token: link, form: { file: png } });
    assert.equal(response.status, 200, response.text);
    return response.body.file.id as string;
  };
  /** The main file as it is now, written for the oracles; pdfsig's verdicts (empty without pdfsig). */
  const signaturesOf = async (id: string) => {
    const doc = await read(id);
    const response = await fetch(
      `${server.url}/api/v1/files/loadFile/hash/${doc.pdfFile.content}?token=${owner}`,
    );
    const path = await space.write(`${id}-${doc._version}.pdf`, Buffer.from(await response.arrayBuffer()));
    return hasTool('pdfsig') ? pdfsig(path) : undefined;
  };
  const assertValidSignatures = async (id: string, count: number) => {
    const verdicts = await signaturesOf(id);
    if (!verdicts) return;
    assert.equal(verdicts.length, count, `pdfsig sees ${count} signatures`);
    for (const v of verdicts) assert.equal(v.validation, 'Signature is Valid.', v.raw);
  };
  function assertError(response: ApiResponse, status: number, code: string, message?: RegExp) {
    assert.equal(response.status, status, response.text);
    assert.equal(response.body.code, code, response.text);
    if (message) assert.match(response.body.message, message);
  }

  it('usage rule 3, POST /share/execute: an external signer executes their sign share with `signatures` and `images`: a PAdES signature in their name, the share done, the document completed and sealed, events and audit as for PUT /share/document/sign', async () => {
    const { id, shareId, link } = await aSharedDocument('Execute by signing', {
      sharePurpose: 'sign',
      shareTo: 'exec@example.org',
    });
    const signature = await shareUpload(link!, 'signature');
    const image = await shareUpload(link!, 'file');
    const executed = await server.api('POST', '/share/execute', {
      token: link,
      body: {
        id,
        signatures: [{ type: 'signature', blob: signature, position: at(0.1) }],
        images: [{ blob: image, pages: [2], position: at(0.5, 0.1) }],
      },
    });
    assert.equal(executed.status, 200, executed.text);
    assert.equal(executed.body.status, 'SUCCESS');
    assert.equal(executed.body.shareStateName, 'completed');
    assert.equal(typeof executed.body.levelAchieved, 'string');
    assert.equal(await shareStatus(shareId), 'done');
    const doc = await read(id);
    assert.equal(doc.isSigned, true);
    assert.equal(doc.workflow.shareStateName, 'completed');
    // The recipient's signature, and the organisation seal made on completion (Contract: sealOnComplete).
    await assertValidSignatures(id, 2);
    assert.deepEqual(await eventsAfterSharing(id), ['documentCompleted', 'documentSigned']);
    const signed = (await audit(id)).find((r) => r.activity_type === 'documentSigned');
    assert.equal(signed?.actor_id, 'exec@example.org', 'the audit names the recipient');
    // The image is used now (rule 3: each image an unused file).
    const again = await server.api('POST', '/share/execute', { token: link, body: { id } });
    // Issue 37 item 9: once done, the link only downloads what was signed.
    assert.equal(again.status, 403, 'the share is done');
  });

  it('usage rule 3, POST /share/execute: an approver executes with `signatures`: their PAdES signature, then the approval (audit `documentSigned` then `documentApproved`), one change; the signer still to come keeps the document in progress', async () => {
    const { id, shareId, link } = await aSharedDocument(
      'Approve by signing',
      { sharePurpose: 'approve', shareTo: 'approver@example.org' },
      [{ sharePurpose: 'sign', shareTo: 'ivy' }],
    );
    const before = await read(id);
    const executed = await server.api('POST', '/share/execute', {
      token: link,
      body: {
        id,
        action: 'approve',
        comment: 'fine',
        signatures: [{ type: 'signature', position: at(0.3) }],
      },
    });
    assert.equal(executed.status, 200, executed.text);
    assert.equal(executed.body.shareStateName, 'inprogress');
    assert.equal(typeof executed.body.levelAchieved, 'string');
    assert.equal(await shareStatus(shareId), 'done');
    const after = await read(id);
    assert.equal(after.isSigned, true);
    assert.equal(after._version, before._version + 1, 'the signature and the approval are one change');
    assert.deepEqual(after.waitingFor, ['ivy']);
    await assertValidSignatures(id, 1);
    assert.deepEqual(await eventsAfterSharing(id), ['documentSigned', 'documentSimpleActionExecuted']);
    assert.deepEqual((await audit(id)).slice(-2), [
      { activity_type: 'documentSigned', actor_id: 'approver@example.org' },
      { activity_type: 'documentApproved', actor_id: 'approver@example.org' },
    ]);
  });

  it('usage rule 3 ("`signatures` entries must follow rule 2"), POST /share/execute: a signature image must be the recipient’s own from POST /share/upload/signature; an image must be an unused POST /share/upload/file upload; positions 0..1; nothing is written when refused', async () => {
    const { id, shareId, link } = await aSharedDocument('Execute refused', {
      sharePurpose: 'sign',
      shareTo: 'refused@example.org',
    });
    const before = await read(id);
    const file = await shareUpload(link!, 'file');
    const wrongKind = await server.api('POST', '/share/execute', {
      token: link,
      body: { id, signatures: [{ type: 'signature', blob: file, position: at(0.1) }] },
    });
    assertError(wrongKind, 400, 'FILE_NOT_USABLE', /signatures\[0\]\.blob/);
    const ownersImage = await upload(server, owner, PNG_1PX, { name: 'o.png', type: 'image/png' });
    const notTheirs = await server.api('POST', '/share/execute', {
      token: link,
      body: {
        id,
        signatures: [{ type: 'signature', position: at(0.1) }],
        images: [{ blob: ownersImage, position: at(0.5) }],
      },
    });
    assertError(notTheirs, 400, 'FILE_NOT_USABLE', /images\[0\]\.blob/);
    const outside = await server.api('POST', '/share/execute', {
      token: link,
      body: { id, signatures: [{ type: 'signature', position: { ...at(0.1), percentX: 1.5 } }] },
    });
    assertError(
      outside,
      400,
      'VALIDATION_ERROR',
      /"signatures\[0\]\.position\.percentX" must be less than or equal to 1/,
    );
    const unsigned = await server.api('POST', '/share/execute', { token: link, body: { id } });
    assertError(unsigned, 400, 'VALIDATION_ERROR', /signatures/);
    assert.equal(await shareStatus(shareId), 'active');
    const after = await read(id);
    assert.equal(after._version, before._version, 'nothing was written');
    assert.equal(after.pdfFile.content, before.pdfFile.content);
  });

  it('usage rule 3, POST /inbox/action: an internal user signs from the inbox (`action: "sign"` with `signatures` and `images` from POST /files/saveFile, each used once)', async () => {
    const ivy = await server.login('ivy', 'user-password-1');
    const { id, shareId } = await aSharedDocument('Inbox signing', { sharePurpose: 'sign', shareTo: 'ivy' });
    const inbox = await server.api('GET', '/inbox', { token: ivy });
    assert.ok(inbox.body.results.some((s: { shareId: string }) => s.shareId === shareId));
    const signatureImage = await upload(server, ivy, PNG_1PX, {
      path: '/files/signature',
      name: 's.png',
      type: 'image/png',
    });
    const image = await upload(server, ivy, PNG_1PX, { name: 'i.png', type: 'image/png' });
    const signed = await inboxAction(ivy, {
      shareId,
      action: 'sign',
      signatures: [{ type: 'signature', blob: signatureImage, position: at(0.6) }],
      images: [{ blob: image, pages: [1], position: at(0.1, 0.1) }],
    });
    assert.equal(signed.status, 200, signed.text);
    assert.equal(signed.body.shareStateName, 'completed');
    assert.equal(await shareStatus(shareId), 'done');
    await assertValidSignatures(id, 2);
    const signedBy = (await audit(id)).find((r) => r.activity_type === 'documentSigned');
    assert.equal(signedBy?.actor_id, 'ivy');

    // The image is used now: a second call naming it is refused (rule 3), and nothing is written.
    const next = await aSharedDocument('Inbox signing again', { sharePurpose: 'sign', shareTo: 'ivy' });
    const reused = await inboxAction(ivy, {
      shareId: next.shareId,
      action: 'sign',
      signatures: [{ type: 'signature', position: at(0.6) }],
      images: [{ blob: image, position: at(0.1, 0.1) }],
    });
    assertError(reused, 400, 'FILE_NOT_USABLE', /images\[0\]\.blob/);
    assert.equal(await shareStatus(next.shareId), 'active');
    // The action named must be the share’s own.
    const approve = await inboxAction(ivy, {
      shareId: next.shareId,
      action: 'approve',
      signatures: [{ type: 'signature', position: at(0.6) }],
    });
    assertError(approve, 403, 'FORBIDDEN');
  });

  it('spec Share `rights` "canAnnotateOnReject", PUT /share/reject: with the right, the recipient’s `images` and `annotations` are drawn on the document (no signature) and it is rejected, `documentEdited` then `signRejected`', async () => {
    const { id, shareId, link } = await aSharedDocument('Reject with notes', {
      sharePurpose: 'sign',
      shareTo: 'critic@example.org',
      rights: ['canAnnotateOnReject'],
    });
    const before = await read(id);
    const image = await shareUpload(link!, 'file');
    const rejected = await server.api('PUT', '/share/reject', {
      token: link,
      body: {
        id,
        reason: 'clause 4 is wrong',
        images: [{ blob: image, pages: [1], position: at(0.1, 0.3) }],
        annotations: [{ text: 'Not this clause', pages: [1], position: at(0.4, 0.3) }],
      },
    });
    assert.equal(rejected.status, 200, rejected.text);
    assert.equal(await shareStatus(shareId), 'rejected');
    const after = await read(id);
    assert.equal(after.workflow.shareStateName, 'rejected');
    assert.notEqual(after.pdfFile.content, before.pdfFile.content, 'the annotated file is the main file');
    assert.equal(after.isSigned, false, 'a rejection signs nothing');
    assert.deepEqual(await signaturesOf(id).then((v) => v?.length ?? 0), 0);
    assert.deepEqual(await eventsAfterSharing(id), ['documentEdited', 'signRejected']);
    const kinds = (await audit(id)).map((r) => [r.activity_type, r.actor_id]);
    assert.deepEqual(kinds.slice(-2), [
      ['documentAnnotated', 'critic@example.org'],
      ['signRejected', 'critic@example.org'],
    ]);
    const revisions = await server.app.deps.db
      .selectFrom('document_revisions')
      .select('reason')
      .where('document_id', '=', id)
      .orderBy('revision')
      .execute();
    assert.equal(revisions.at(-1)?.reason, 'annotated');
  });

  it('spec Share `rights` "canAnnotateOnReject", PUT /share/reject: without the right, `images`, `annotations` or `signatures` are refused (403 naming the right) and nothing is written; the plain rejection still works', async () => {
    const { id, shareId, link } = await aSharedDocument('Reject without notes', {
      sharePurpose: 'sign',
      shareTo: 'plain@example.org',
    });
    const image = await shareUpload(link!, 'file');
    for (const extra of [
      { images: [{ blob: image, position: at(0.1) }] },
      { annotations: [{ text: 'No', position: at(0.1) }] },
      { signatures: [{ type: 'initials', position: at(0.1) }] },
    ]) {
      const refused = await server.api('PUT', '/share/reject', { token: link, body: { id, ...extra } });
      assertError(refused, 403, 'FORBIDDEN', /canAnnotateOnReject/);
    }
    assert.equal(await shareStatus(shareId), 'active');
    const unused = await server.app.deps.db
      .selectFrom('files')
      .select('used_by')
      .where('id', '=', image)
      .executeTakeFirstOrThrow();
    assert.equal(unused.used_by, null, 'the image is still unused');
    const rejected = await server.api('PUT', '/share/reject', { token: link, body: { id, reason: 'no' } });
    assert.equal(rejected.status, 200, rejected.text);
    assert.equal((await read(id)).workflow.shareStateName, 'rejected');
  });

  it('spec Share `rights` "canAnnotateOnReject", POST /inbox/action `reject`: an internal user annotates and rejects from the inbox', async () => {
    const ivy = await server.login('ivy', 'user-password-1');
    const { id, shareId } = await aSharedDocument('Inbox reject', {
      sharePurpose: 'review',
      shareTo: 'ivy',
      rights: ['canAnnotateOnReject'],
    });
    const rejected = await inboxAction(ivy, {
      shareId,
      action: 'reject',
      reason: 'see the note',
      annotations: [{ text: 'Wrong figures', pages: [2], position: at(0.1, 0.2) }],
    });
    assert.equal(rejected.status, 200, rejected.text);
    assert.equal(await shareStatus(shareId), 'rejected');
    assert.deepEqual(await eventsAfterSharing(id), ['documentEdited', 'signRejected']);
    assert.deepEqual(
      (await audit(id)).slice(-2).map((r) => r.activity_type),
      ['documentAnnotated', 'signRejected'],
    );
  });

  it('the OpenAPI description documents `signatures`, `images`, `annotations` (and `level` where a signature is made) in the bodies of POST /share/execute, PUT /share/reject and POST /inbox/action', async () => {
    const openapi = (await server.api('GET', '/openapi.json')).body;
    const body = (path: string, method: string) => {
      const schema = openapi.paths[`/api/v1${path}`][method].requestBody.content['application/json'].schema;
      return schema.properties as Record<string, unknown>;
    };
    for (const [path, method, fields] of [
      ['/share/execute', 'post', ['signatures', 'images', 'annotations', 'level']],
      ['/share/reject', 'put', ['signatures', 'images', 'annotations']],
      ['/inbox/action', 'post', ['signatures', 'images', 'annotations', 'level']],
    ] as const) {
      const properties = body(path, method);
      for (const field of fields) assert.ok(properties[field], `${method} ${path} documents ${field}`);
    }
  });
});

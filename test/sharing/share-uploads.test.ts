import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { loadUsableStamp } from '../../src/core/stamps/load-usable-stamp.js';
import { aDocument, readDocument } from '../helpers/documents.js';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { aUser, withMail } from '../helpers/people.js';
import { assertError } from '../helpers/api-errors.js';
import { auditOf } from '../helpers/audit-log.js';
import { anExternalShare, shareDocument } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';

const POSITION = { percentX: 0.1, percentY: 0.1, percentWidth: 0.2, percentHeight: 0.05 };

describe('spec Files and Sharing: the recipients’ uploads (POST /share/upload/*, GET /share/stamp/{id})', () => {
  const server = useServer({ smtp: true, env: { PUBLIC_URL: 'https://sign.example.test' } });
  let owner: string;
  let ivy: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
    ivy = (await aUser(server, withMail('ivy'))).token;
  });

  const newDoc = (title: string) => aDocument(server, owner, { title, pdf: null });
  const doc = (id: string) => readDocument(server, owner, id);

  /** Shares a new document with one external recipient and returns the link's token from the mail. */
  const shareWith = async (
    email: string,
    recipient: Record<string, unknown> = {},
    signatureFields: Record<string, unknown>[] = [],
  ) => {
    const share = signatureFields.length > 0 ? { signatureFields } : {};
    const shared = await anExternalShare(server, owner, {
      title: `For ${email}`,
      pdf: null,
      email,
      recipient,
      share,
    });
    return { id: shared.id, token: shared.link, shareId: shared.shares[0].shareId as string };
  };
  const send = (
    path: string,
    token: string,
    fields: Record<string, string> = {},
    file = { name: 'image.png', type: 'image/png', bytes: PNG_1PX },
  ) => server.api('POST', path, { token, form: { fields, file } });
  it('usage rule 2: signature and initials "for an external recipient with POST /share/upload/signature and /share/upload/initials": owned by nobody, recorded with the share', async () => {
    const { token, shareId } = await shareWith('sig@example.org');
    for (const [path, kind] of [
      ['/share/upload/signature', 'share-signature'],
      ['/share/upload/initials', 'share-initials'],
      ['/share/upload/file', 'share-file'],
    ] as const) {
      const response = await send(path, token, { fileName: 'mine.png' });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.file.documentname, 'mine.png');
      assert.equal(response.body.file.mimetype, 'image/png');
      assert.equal(response.body.file.hash, response.body.file.id);
      assert.ok(response.body.storage.limit > 0);
      const row = await server.app.deps.db
        .selectFrom('files')
        .selectAll()
        .where('id', '=', response.body.file.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual([row.kind, row.owner_id, row.share_id, row.used_by], [kind, null, shareId, null]);
    }
  });

  it("usage rule 2: a recipient's signature and initials images are refused at upload unless the bytes are PNG or JPEG", async () => {
    const { token } = await shareWith('notimage@example.org');
    for (const path of ['/share/upload/signature', '/share/upload/initials']) {
      const response = await send(
        path,
        token,
        {},
        { name: 'sig.png', type: 'image/png', bytes: makePdf() as typeof PNG_1PX },
      );
      assertError(response, 400, 'VALIDATION_ERROR');
      assert.match(response.body.message, /"file" must be a PNG or JPEG image/);
    }
  });

  it('Versioning 4: "POST /share/upload/stamp returns a stamp ID", whose image GET /share/stamp/{id} shows to the share and the document owner', async () => {
    const { token, shareId } = await shareWith('stamp@example.org');
    const other = await shareWith('other@example.org');
    const uploaded = await send('/share/upload/stamp', token, { name: 'Company seal' });
    assert.equal(uploaded.status, 200, uploaded.text);
    assert.deepEqual(Object.keys(uploaded.body), ['id']);
    const { id } = uploaded.body;
    // The name's limit, as its OpenAPI description states it: 1 to 200 characters.
    assertError(await send('/share/upload/stamp', token, { name: 'n'.repeat(201) }), 400, 'VALIDATION_ERROR');
    assert.equal((await send('/share/upload/stamp', token, { name: 'n'.repeat(200) })).status, 200);

    const image = await server.api('GET', `/share/stamp/${id}`, { token });
    assert.equal(image.status, 200, image.text);
    assert.equal(image.headers.get('content-type'), 'image/png');
    assert.equal(Number(image.headers.get('content-length')), PNG_1PX.length);
    assert.equal((await server.api('GET', `/share/stamp/${id}`, { token: owner })).status, 200);
    assertError(await server.api('GET', `/share/stamp/${id}`, { token: other.token }), 404, 'NOT_FOUND');
    assertError(await server.api('GET', `/share/stamp/${id}`, { token: ivy }), 404, 'NOT_FOUND');
    // Not one of the caller's stamp resources either.
    assertError(await server.api('GET', `/stamps/${id}`, { token: owner }), 404, 'NOT_FOUND');

    // The signing code resolves a `stamp` entry's blob to the stamp and its image, for its share only.
    const recipient = {
      shareId,
      documentId: '',
      tenantId: (await server.app.deps.db.selectFrom('stamps').select('tenant_id').executeTakeFirstOrThrow())
        .tenant_id,
      shareTo: 'stamp@example.org',
      email: 'stamp@example.org',
      standing: 'live' as const,
      unlocked: true,
      requestId: 'test',
    };
    const usable = await loadUsableStamp(server.app.deps, recipient, id);
    assert.equal(usable.stamp.scope, 'share');
    assert.equal(usable.file.kind, 'share-stamp');
    assert.equal(usable.file.used_by, `stamp:${id}`);
    await assert.rejects(
      loadUsableStamp(server.app.deps, { ...recipient, shareId: other.shareId }, id, 'signatures[0].blob'),
      { code: 'FILE_NOT_USABLE' },
    );

    const notImage = await send(
      '/share/upload/stamp',
      token,
      {},
      {
        name: 'x.txt',
        type: 'text/plain',
        bytes: Buffer.from('not an image'),
      },
    );
    assertError(notImage, 400, 'FILE_NOT_USABLE');
  });

  /** A document shared with `email`, whose one field asks for a file (`customId`); its id and link. */
  const aFileFieldShare = (
    title: string,
    email: string,
    customId: string,
    field: Record<string, unknown> = {},
  ) =>
    anExternalShare(server, owner, {
      title,
      email,
      share: {
        signatureFields: [
          {
            type: 'annotation',
            subtype: 'annotation_submitted_file',
            customId,
            user: [email],
            position: POSITION,
            ...field,
          },
          // Where the recipient signs: recipients draw only in their fields (issue 40).
          { type: 'signature', user: [email], position: POSITION },
        ],
      },
    });

  it('Sharing rule 5: a submitted file answers one annotation_submitted_file field of the share; the recipient may replace it until they act (issue 25)', async () => {
    const email = 'submit@example.org';
    const { id, token } = await shareWith(email, {}, [
      {
        type: 'annotation',
        subtype: 'annotation_submitted_file',
        customId: 'id-card',
        user: [email],
        position: POSITION,
      },
      { type: 'signature', customId: 'sig', user: [email], position: POSITION },
    ]);
    const pdf = { name: 'passport.pdf', type: 'application/pdf', bytes: Buffer.from('%PDF-1.4 scan') };
    assertError(await send('/share/upload/submittedFile', token, {}, pdf), 400, 'VALIDATION_ERROR');
    assertError(
      await send('/share/upload/submittedFile', token, { fieldId: 'sig' }, pdf),
      400,
      'VALIDATION_ERROR',
    );
    assertError(
      await send('/share/upload/submittedFile', token, { fieldId: 'nope' }, pdf),
      400,
      'VALIDATION_ERROR',
    );
    const before = await doc(id);

    const submitted = await send('/share/upload/submittedFile', token, { fieldId: 'id-card' }, pdf);
    assert.equal(submitted.status, 200, submitted.text);
    assert.equal(submitted.body.file.documentname, 'passport.pdf');
    const view = submitted.body.results[0];
    assert.equal(view.documentId, id);
    assert.equal(view._version, before._version + 1);
    assert.deepEqual(
      view.submittedFiles.map((f: { content: string }) => f.content),
      [submitted.body.file.id],
    );
    const seen = await doc(id);
    assert.equal(seen.submittedFiles[0].content, submitted.body.file.id);
    assert.ok(!seen.file.some((f: { content: string }) => f.content === submitted.body.file.id));

    const shareView = (await server.api('GET', '/share/document', { token })).body.results[0].share;
    const idCard = shareView.signatureFields.find((f: { customId?: string }) => f.customId === 'id-card');
    assert.equal(
      seen.submittedFiles[0].field,
      idCard.fieldId,
      'each submitted file names the field it answers',
    );

    // The wrong scan: the recipient sends another, which takes the place of the first.
    const back = { ...pdf, name: 'passport-back.pdf' };
    const again = await send('/share/upload/submittedFile', token, { customId: 'id-card' }, back);
    assert.equal(again.status, 200, again.text);
    const replaced = await doc(id);
    assert.deepEqual(
      replaced.submittedFiles.map((f: { content: string; documentname: string; field: string }) => [
        f.content,
        f.documentname,
        f.field,
      ]),
      [[again.body.file.id, 'passport-back.pdf', idCard.fieldId]],
    );
    assert.equal(replaced._version, seen._version + 1);
    const submissions = await auditOf(server, id, 'documentFileSubmitted');
    assert.equal(submissions.length, 2, 'both submissions are audited');
    assert.equal(submissions[1]!.data.replaces, submitted.body.file.id, 'the second says what it replaced');
  });

  it('a submission stays once its recipient has signed: a new file for the field is refused and the signed one is kept', async () => {
    const { id, link: token } = await aFileFieldShare('Kept', 'kept@example.org', 'scan');
    const pdf = { name: 'scan.pdf', type: 'application/pdf', bytes: Buffer.from('%PDF-1.4 scan') };
    const submitted = await send('/share/upload/submittedFile', token, { fieldId: 'scan' }, pdf);
    assert.equal(submitted.status, 200, submitted.text);
    const signed = await server.api('PUT', `/share/document/sign/${submitted.body.results[0]._version}`, {
      token,
      body: { id, signatures: [{ type: 'signature', pages: [1], position: POSITION }] },
    });
    assert.equal(signed.status, 200, signed.text);
    const late = await send('/share/upload/submittedFile', token, { fieldId: 'scan' }, pdf);
    assert.ok(late.status >= 400 && late.status < 500, late.text);
    assert.deepEqual(
      (await doc(id)).submittedFiles.map((f: { content: string }) => f.content),
      [submitted.body.file.id],
    );
  });

  it('a required annotation_submitted_file field must have its file before the recipient signs (required fields enforced)', async () => {
    const { id, link: token } = await aFileFieldShare('Needs proof', 'required@example.org', 'proof', {
      required: true,
    });
    const version = (await server.api('GET', '/share/document', { token })).body.results[0]._version;
    const sign = (v: number) =>
      server.api('PUT', `/share/document/sign/${v}`, {
        token,
        body: { id, signatures: [{ type: 'signature', pages: [1], position: POSITION }] },
      });
    const early = await sign(version);
    assertError(early, 400, 'VALIDATION_ERROR');
    assert.match(early.body.message, /"signatureFields\[0\]" is required: submit its file/);
    assert.equal((await doc(id)).isSigned, false);
    const pdf = { name: 'proof.pdf', type: 'application/pdf', bytes: Buffer.from('%PDF-1.4 proof') };
    const submitted = await send('/share/upload/submittedFile', token, { fieldId: 'proof' }, pdf);
    assert.equal(submitted.status, 200, submitted.text);
    const signed = await sign(submitted.body.results[0]._version);
    assert.equal(signed.status, 200, signed.text);
    assert.equal((await doc(id)).isSigned, true);
  });

  it('a required text field must be answered in the sign call (annotations with its fieldId)', async () => {
    const email = 'text@example.org';
    const { id, link: token } = await anExternalShare(server, owner, {
      title: 'Needs a city',
      email,
      share: {
        signatureFields: [
          {
            type: 'annotation',
            subtype: 'annotation_generic',
            customId: 'city',
            required: true,
            user: [email],
            position: POSITION,
          },
          { type: 'annotation', customId: 'note', user: [email], position: POSITION },
          // Where the recipient signs: recipients draw only in their fields (issue 40).
          { type: 'signature', user: [email], position: POSITION },
        ],
      },
    });
    const version = (await server.api('GET', '/share/document', { token })).body.results[0]._version;
    const sign = (annotations: unknown[]) =>
      server.api('PUT', `/share/document/sign/${version}`, {
        token,
        body: { id, signatures: [{ type: 'signature', pages: [1], position: POSITION }], annotations },
      });
    const missing = await sign([{ text: 'Berlin', pages: [1], position: POSITION }]);
    assertError(missing, 400, 'VALIDATION_ERROR');
    assert.match(
      missing.body.message,
      /"signatureFields\[0\]" is required: send its text in "annotations" with "fieldId": "city"/,
    );
    assertError(
      await sign([{ fieldId: 'city', text: '  ', pages: [1], position: POSITION }]),
      400,
      'VALIDATION_ERROR',
    );
    const answered = await sign([{ fieldId: 'city', text: 'Berlin', pages: [1], position: POSITION }]);
    assert.equal(answered.status, 200, answered.text);
    assert.equal((await doc(id)).isSigned, true);
  });

  it('Sharing rule 5: adding files to the document needs the share right uploadFiles', async () => {
    const without = await shareWith('noright@example.org');
    assertError(await send('/share/upload/file', without.token, { attach: 'true' }), 403, 'FORBIDDEN');
    assert.equal((await doc(without.id)).file.length, 0);

    const withRight = await shareWith('right@example.org', { rights: ['uploadFiles'] });
    const before = await doc(withRight.id);
    const attached = await send(
      '/share/upload/file',
      withRight.token,
      { attach: 'true' },
      {
        name: 'invoice.txt',
        type: 'text/plain',
        bytes: Buffer.from('invoice'),
      },
    );
    assert.equal(attached.status, 200, attached.text);
    const after = await doc(withRight.id);
    assert.equal(after._version, before._version + 1);
    assert.deepEqual(after.file, [
      {
        content: attached.body.file.id,
        documentname: 'invoice.txt',
        mimetype: 'text/plain',
        size: 7,
        public: false,
      },
    ]);
    assert.equal(
      attached.body.results[0].file.length,
      0,
      'non-public: the recipient’s view does not list it',
    );
    assertError(
      await send('/share/upload/file', withRight.token, { attach: 'maybe' }),
      400,
      'VALIDATION_ERROR',
    );
    assertError(
      await send('/share/upload/signature', withRight.token, { attach: 'true' }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('a locked (password) share is refused with 403 MFA_REQUIRED through its link; the session POST /share/unlock answers uploads, and it and the link end with the share (401)', async () => {
    const { id, token } = await shareWith('locked@example.org', { password: 'open-sesame' });
    for (const path of [
      '/share/upload/signature',
      '/share/upload/initials',
      '/share/upload/stamp',
      '/share/upload/file',
      '/share/upload/submittedFile',
    ]) {
      assertError(await send(path, token, { fieldId: 'x' }), 403, 'MFA_REQUIRED');
    }
    const unlocked = await server.api('POST', '/share/unlock', { token, body: { password: 'open-sesame' } });
    assert.equal(unlocked.status, 200);
    const session = unlocked.body.token as string;
    assert.equal((await send('/share/upload/signature', session)).status, 200);
    assertError(await send('/share/upload/signature', token), 403, 'MFA_REQUIRED');

    assert.equal((await server.api('PUT', '/share/reject', { token: session, body: { id } })).status, 200);
    // The session and the link ended with the share (DESIGN: a share's link has no power once it ended).
    assertError(await send('/share/upload/signature', session), 401, 'UNAUTHENTICATED');
    assertError(await send('/share/upload/signature', token), 401, 'UNAUTHENTICATED');
  });

  it('internal recipients upload with their session, naming the document by `id`; a stranger gets 404', async () => {
    const id = await newDoc('For Ivy');
    await shareDocument(server, owner, id, { to: 'ivy' });
    assertError(await send('/share/upload/signature', ivy), 400, 'VALIDATION_ERROR');
    assert.equal((await send('/share/upload/signature', ivy, { id })).status, 200);
    const stamp = await send('/share/upload/stamp', ivy, { id });
    assert.equal(stamp.status, 200, stamp.text);
    assert.equal((await server.api('GET', `/share/stamp/${stamp.body.id}`, { token: ivy })).status, 200);
    const stranger = (await aUser(server, { name: 'stranger' })).token;
    assertError(await send('/share/upload/signature', stranger, { id }), 404, 'NOT_FOUND');
    assertError(
      await server.api('GET', `/share/stamp/${stamp.body.id}`, { token: stranger }),
      404,
      'NOT_FOUND',
    );
  });
});

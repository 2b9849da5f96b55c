import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { verifyAuditChain } from '../../src/audit/verify-chain.js';
import { BYTES_REMOVAL_JOB, type BytesRemovalPayload } from '../../src/core/files/bytes-removal.js';
import { S3BlobStore } from '../../src/store/blobs/s3.js';
import { readJson } from '../../src/store/db/json.js';
import { auditOf } from '../helpers/audit-log.js';
import { aDocument, readDocument } from '../helpers/documents.js';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { aUser, withMail } from '../helpers/people.js';
import { startS3rver, type RunningS3 } from '../helpers/s3rver.js';
import { mustSucceed, upload } from '../helpers/server.js';
import { anExternalShare } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';

/** Waits up to ten seconds for `done` to hold. */
async function waitFor(done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200 && !(await done()); i++) await sleep(50);
  assert.ok(await done(), 'in time');
}

/*
 * DESIGN, decided this round: "Hard delete (`hardDelete=true`) removes the document's rows, revisions,
 * attachments and file records at once; their bytes go as soon as no other file references them. The
 * audit chain keeps event hashes and ids, never contents. A soft-deleted document can be hard-deleted
 * later; a soft delete ends its shares."
 */
describe('DESIGN: deletion deletes (DELETE /documents, soft and hard)', () => {
  const server = useServer({ smtp: true, env: { PUBLIC_URL: 'https://sign.example.test' } });
  let owner: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
  });

  const remove = async (id: string, hard: boolean) => {
    const response = await server.api('DELETE', '/documents', {
      token: owner,
      ...(hard ? { query: { hardDelete: 'true' } } : {}),
      body: { documents: [{ id }] },
    });
    return mustSucceed(response, 'DELETE /documents').body;
  };
  const loadByHash = async (fileId: string, token = owner) =>
    (await fetch(`${server.url}/api/v1/files/loadFile/hash/${fileId}?token=${token}`)).status;
  /** The keys of the files' bytes (content-addressed: DATA_DIR/blobs/ab/cd/<sha256>). */
  const bytesOf = async (fileIds: string[]) =>
    (await server.app.deps.db.selectFrom('files').select('sha256').where('id', 'in', fileIds).execute()).map(
      (row) => row.sha256,
    );
  const stored = (sha256: string) =>
    existsSync(join(server.dataDir, 'blobs', sha256.slice(0, 2), sha256.slice(2, 4), sha256));
  const documentRow = (id: string) =>
    server.app.deps.db.selectFrom('documents').selectAll().where('id', '=', id).executeTakeFirst();

  it('hard delete removes every file of the document at once (original, sealed, barcode, attachment): 404 by hash, bytes gone from DATA_DIR; a file with the same bytes in another document stays', async () => {
    const pdf = makePdf({ lines: ['Hard delete: every file goes'] });
    const attachment = await upload(server, owner, Buffer.from('attachment bytes of the deleted one'), {
      name: 'notes.txt',
      type: 'text/plain',
    });
    const id = await aDocument(server, owner, { pdf, body: { file: [{ content: attachment }] } });
    const original = (await readDocument(server, owner, id)).pdfFile.content as string;
    mustSucceed(
      await server.api('PUT', '/documents/seal/1', { token: owner, body: { id, certificate: true } }),
      'PUT /documents/seal',
    );
    const sealedDoc = await readDocument(server, owner, id);
    const [sealed, barcode] = [sealedDoc.pdfFile.content as string, sealedDoc.barcode as string];
    assert.notEqual(sealed, original);
    // The same bytes, uploaded again for another document: another file record over the same blob.
    const other = await aDocument(server, owner, { pdf, title: 'Other' });
    const otherFile = (await readDocument(server, owner, other)).pdfFile.content as string;
    const files = [original, sealed, barcode, attachment];
    for (const file of files) assert.equal(await loadByHash(file), 200, file);
    const blobs = await bytesOf(files);
    assert.equal(blobs.length, 4);
    const [originalBytes] = await bytesOf([original]);
    assert.deepEqual(await bytesOf([otherFile]), [originalBytes], 'deduplicated: one blob for both');

    assert.deepEqual(await remove(id, true), { errors: false, count: 1, items: [] });

    for (const file of files) assert.equal(await loadByHash(file), 404, `${file} is gone`);
    assert.deepEqual(await bytesOf(files), [], 'no file record stays');
    for (const sha256 of blobs.filter((b) => b !== originalBytes))
      assert.equal(stored(sha256), false, sha256);
    assert.equal(stored(originalBytes!), true, 'bytes another file references stay');
    // The removal was also queued with the deletion, for a crash or a failure after commit; it finds
    // nothing more to remove, and keeps the bytes another file has.
    const job = await server.app.deps.db
      .selectFrom('jobs')
      .select(['payload', 'status'])
      .where('type', '=', BYTES_REMOVAL_JOB)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      [...readJson<BytesRemovalPayload>(job.payload, { sha256s: [], writtenBefore: '' }).sha256s].sort(),
      [...blobs].sort(),
    );
    await waitFor(
      async () =>
        (
          await server.app.deps.db
            .selectFrom('jobs')
            .select('status')
            .where('type', '=', BYTES_REMOVAL_JOB)
            .executeTakeFirstOrThrow()
        ).status === 'done',
    );
    assert.equal(stored(originalBytes!), true);
    assert.equal(await loadByHash(otherFile), 200);
    const rows = async (table: 'document_revisions' | 'document_attachments') =>
      server.app.deps.db.selectFrom(table).select('document_id').where('document_id', '=', id).execute();
    assert.deepEqual([await rows('document_revisions'), await rows('document_attachments')], [[], []]);
    assert.equal(await documentRow(id), undefined);

    // The audit chain keeps ids and hashes of what went, never names or contents, and still verifies.
    const [deleted] = await auditOf(server, id, 'documentHardDeleted');
    assert.deepEqual(Object.keys(deleted!.data).sort(), ['files', 'version']);
    assert.deepEqual(
      (deleted!.data.files as { id: string; sha256: string }[]).map((f) => f.id).sort(),
      [...files].sort(),
    );
    assert.doesNotMatch(JSON.stringify(deleted!.data), /notes\.txt|Agreement|document\.pdf/);
    assert.deepEqual((await verifyAuditChain(server.app.deps.db)).broken, []);
  });

  it('hard delete ends the shares with the document: their rows, the link, and what the recipient uploaded through it', async () => {
    const { id, shares, link } = await anExternalShare(server, owner, {
      pdf: makePdf({ lines: ['Shared, then hard-deleted'] }),
      email: 'recipient-hard@example.org',
    });
    const uploaded = await server.api('POST', '/share/upload/file', {
      token: link,
      form: {
        fields: { fileName: 'mine.png' },
        file: { name: 'mine.png', type: 'image/png', bytes: PNG_1PX },
      },
    });
    assert.equal(uploaded.status, 200, uploaded.text);
    const recipientFile = uploaded.body.file.id as string;
    const [recipientBytes] = await bytesOf([recipientFile]);

    await remove(id, true);

    assert.equal((await server.api('GET', '/share/document', { token: link })).status, 401);
    const share = await server.app.deps.db
      .selectFrom('shares')
      .select('id')
      .where('id', '=', shares[0].shareId as string)
      .executeTakeFirst();
    assert.equal(share, undefined);
    assert.deepEqual(await bytesOf([recipientFile]), []);
    assert.equal(stored(recipientBytes!), false);
  });

  it('a soft delete ends the document’s shares: the link answers 401, the shares are cancelled and the process leaves inprogress (cancelled)', async () => {
    const { id, link } = await anExternalShare(server, owner, {
      pdf: makePdf({ lines: ['Soft-deleted while in progress'] }),
      email: 'recipient-soft@example.org',
    });
    assert.equal((await server.api('GET', '/share/document', { token: link })).status, 200);
    assert.equal((await documentRow(id))!.share_state, 'inprogress');

    assert.deepEqual(await remove(id, false), { errors: false, count: 1, items: [] });

    const answer = await server.api('GET', '/share/document', { token: link });
    assert.equal(answer.status, 401, answer.text);
    assert.equal(answer.body.code, 'UNAUTHENTICATED');
    const row = await documentRow(id);
    assert.ok(row?.deleted_at, 'soft: the row stays, marked deleted');
    assert.equal(row.share_state, 'cancelled');
    const shares = await server.app.deps.db
      .selectFrom('shares')
      .select(['id', 'status'])
      .where('document_id', '=', id)
      .execute();
    assert.deepEqual(
      shares.map((share) => share.status),
      ['cancelled'],
    );
    const links = await server.app.deps.db
      .selectFrom('share_links')
      .select('share_id')
      .where(
        'share_id',
        'in',
        shares.map((share) => share.id),
      )
      .execute();
    assert.deepEqual(links, [], 'no link of the document is kept');
    const events = await server.app.deps.db
      .selectFrom('events')
      .select('event')
      .where('document_id', '=', id)
      .orderBy('occurred_at')
      .execute();
    assert.deepEqual(events.map((e) => e.event).slice(-2), ['signCancelled', 'documentDeleted']);
  });

  it('a soft-deleted document can be hard-deleted later by its owner (and an administrator), not by anyone else, and not soft-deleted twice', async () => {
    const stranger = (await aUser(server, withMail('stranger'))).token;
    const pdf = makePdf({ lines: ['Soft first, hard later'] });
    const id = await aDocument(server, owner, { pdf });
    const file = (await readDocument(server, owner, id)).pdfFile.content as string;
    const [sha256] = await bytesOf([file]);
    await remove(id, false);
    assert.equal(await loadByHash(file), 200, 'soft: the owner’s own upload is still there');

    assert.deepEqual(await remove(id, false), {
      errors: true,
      count: 0,
      items: [{ id, error: 'not found' }],
    });
    const byStranger = await server.api('DELETE', '/documents', {
      token: stranger,
      query: { hardDelete: 'true' },
      body: { documents: [{ id }] },
    });
    assert.deepEqual(byStranger.body.items, [{ id, error: 'not found' }]);

    assert.deepEqual(await remove(id, true), { errors: false, count: 1, items: [] });
    assert.equal(await documentRow(id), undefined);
    assert.equal(await loadByHash(file), 404);
    assert.equal(stored(sha256!), false);

    const admins = await aDocument(server, owner, { pdf: makePdf({ lines: ['Hard-deleted by the admin'] }) });
    await remove(admins, false);
    const byAdmin = await server.api('DELETE', '/documents', {
      token: await server.adminToken(),
      query: { hardDelete: 'true' },
      body: { documents: [{ id: admins }] },
    });
    assert.deepEqual(byAdmin.body, { errors: false, count: 1, items: [] });
  });

  it('a hard delete of a folder takes what was soft-deleted in it, files included', async () => {
    const folder = mustSucceed(
      await server.api('POST', '/folders', {
        token: owner,
        body: { name: 'To be emptied', isShared: false, parentFolderId: null },
      }),
      'POST /folders',
    ).body.id as string;
    const inside = await aDocument(server, owner, {
      pdf: makePdf({ lines: ['Soft-deleted inside a folder'] }),
      call: { optionalData: { folder } },
    });
    const file = (await readDocument(server, owner, inside)).pdfFile.content as string;
    const [sha256] = await bytesOf([file]);
    await remove(inside, false);

    assert.deepEqual(await remove(folder, true), { errors: false, count: 2, items: [] });

    assert.equal(await documentRow(inside), undefined);
    assert.equal(await documentRow(folder), undefined);
    assert.equal(await loadByHash(file), 404);
    assert.equal(stored(sha256!), false);
  });
});

describe('DESIGN: deletion deletes, with the bytes in S3 (S3_* set)', () => {
  let s3: RunningS3;
  before(async () => {
    s3 = await startS3rver();
  });
  const server = useServer(() => ({ env: s3.env }));
  after(() => s3.close());

  it('hard delete removes the bytes from the bucket once no file has them; bytes another file has stay', async () => {
    const owner = (await aUser(server, withMail('owner'))).token;
    const pdf = makePdf({ lines: ['Hard delete on S3'] });
    const id = await aDocument(server, owner, { pdf });
    const other = await aDocument(server, owner, { pdf, title: 'Same bytes' });
    const barcode = (await readDocument(server, owner, id)).barcode as string;
    const sha256Of = async (fileId: string) =>
      (
        await server.app.deps.db
          .selectFrom('files')
          .select('sha256')
          .where('id', '=', fileId)
          .executeTakeFirstOrThrow()
      ).sha256;
    const [shared, own] = [
      await sha256Of((await readDocument(server, owner, id)).pdfFile.content as string),
      await sha256Of(barcode),
    ];
    assert.ok(server.app.blobs instanceof S3BlobStore);
    assert.ok(await server.app.blobs.stat(own));

    const response = await server.api('DELETE', '/documents', {
      token: owner,
      query: { hardDelete: 'true' },
      body: { documents: [{ id }] },
    });
    assert.deepEqual(mustSucceed(response, 'DELETE /documents').body, { errors: false, count: 1, items: [] });

    assert.equal(await server.app.blobs.stat(own), undefined, 'the barcode’s bytes are gone from the bucket');
    assert.ok(await server.app.blobs.stat(shared), 'the other document’s bytes stay');
    const otherFile = (await readDocument(server, owner, other)).pdfFile.content as string;
    const download = await fetch(`${server.url}/api/v1/files/loadFile/hash/${otherFile}?token=${owner}`);
    assert.equal(download.status, 200);
  });
});

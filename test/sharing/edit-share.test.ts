import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { bootstrapAdmin } from '../../src/users/bootstrap-admin.js';
import { hasTool, pdfsig, workspace, type Workspace } from '../pdf/oracles.js';
import { aDocument } from '../helpers/documents.js';
import { shareDocument } from '../helpers/sharing.js';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { createUser, startServer, upload, type ApiResponse, type TestServer } from '../helpers/server.js';

const BOX = { percentX: 0.1, percentY: 0.8, percentWidth: 0.2, percentHeight: 0.06 };
const PASSWORD = 'user-password-1';

/**
 * Issue 24 item 11. spec Sharing, `data` element `sharePurpose`: "`view`, `edit`, `sign`, … ; view =
 * read-only, edit = edit rights". An internal user with an edit share changes the document and signs
 * it; a view share still reads only, and everyone else is refused as before.
 */
describe('an edit share gives edit rights (spec Sharing: "view = read-only, edit = edit rights")', () => {
  const clock = new ManualClock(new Date());
  let server: TestServer;
  let owner: string;
  let editor: string;
  let viewer: string;
  let member: string;
  let stranger: string;
  let space: Workspace;
  before(async () => {
    server = await startServer({ clock });
    const rights = [
      'use_file_management',
      'use_document_management',
      'add_file_attachments',
      'view_attachments',
    ];
    await createUser(server, { name: 'owner', email: 'owner@example.test', rights });
    await createUser(server, {
      name: 'edna',
      email: 'edna@example.test',
      displayName: 'Edna Editor',
      rights,
    });
    await createUser(server, { name: 'vic', email: 'vic@example.test', rights });
    await createUser(server, { name: 'mel', email: 'mel@example.test', rights });
    owner = await server.login('owner', PASSWORD);
    editor = await server.login('edna', PASSWORD);
    viewer = await server.login('vic', PASSWORD);
    member = await server.login('mel', PASSWORD);
    // Another tenant's user, made by that tenant's administrator.
    await bootstrapAdmin(server.app.deps, { tenant: 'other', name: 'other-admin', password: PASSWORD });
    const otherAdmin = await server.login('other-admin', PASSWORD, { tenant: 'other' });
    await createUser(server, { name: 'stan', rights }, otherAdmin);
    stranger = await server.login('stan', PASSWORD, { tenant: 'other' });
    space = await workspace();
  });
  after(async () => {
    await server.close();
    await space.remove();
  });

  /** A document of the owner's shared for `edit` with edna and for `view` with vic. */
  const aSharedDocument = async (title: string, edit: Record<string, unknown> = {}) => {
    const id = await aDocument(server, owner, { title, pdf: { pages: 2 } });
    await shareDocument(server, owner, id, {
      to: [
        { sharePurpose: 'edit', shareTo: 'edna', ...edit },
        { sharePurpose: 'view', shareTo: 'vic' },
      ],
    });
    return id;
  };
  const read = async (id: string) =>
    (await server.api('GET', `/documents/${id}`, { token: owner })).body.results[0];
  const version = async (id: string) => (await read(id))._version as number;
  const signatureImage = (token: string) =>
    upload(server, token, PNG_1PX, { path: '/files/signature', name: 's.png', type: 'image/png' });
  /** The content-changing calls, each on the document's current version, as `token`. */
  const changes = (token: string, id: string) => ({
    update: async () =>
      server.api('PUT', `/documents/${await version(id)}`, {
        token,
        body: { id, body: { documentTitle: 'Updated by the editor' } },
      }),
    edit: async () =>
      server.api('PUT', `/documents/edit/${await version(id)}`, {
        token,
        body: { id, documentTitle: 'Edited by the editor' },
      }),
    annotate: async () =>
      server.api('PUT', `/documents/annotate/${await version(id)}`, {
        token,
        body: { id, annotations: [{ text: 'Checked', pages: [2], position: BOX }] },
      }),
    sign: async () =>
      server.api('PUT', `/documents/sign/${await version(id)}`, {
        token,
        body: { id, signatures: [{ type: 'signature', blob: await signatureImage(token), position: BOX }] },
      }),
  });
  function assertRefused(response: ApiResponse, status: number, code: string, what: string) {
    assert.equal(response.status, status, `${what}: ${response.text}`);
    assert.equal(response.body.code, code, `${what}: ${response.text}`);
  }

  it('"edit = edit rights": the editor changes the document (PUT /documents/:version with an attachment of theirs, PUT /documents/edit/:version, PUT /documents/annotate/:version) and signs it with PUT /documents/sign/:version: a PAdES signature in their name', async () => {
    const id = await aSharedDocument('Shared for editing');
    const attachment = await upload(server, editor, makePdf({ title: 'Annex by the editor' }));
    const updated = await server.api('PUT', `/documents/${await version(id)}`, {
      token: editor,
      body: {
        id,
        body: {
          documentTitle: 'Updated by the editor',
          customFields: [{ key: 'ref', displayName: 'Ref', type: 'string', value: 'E-1' }],
          file: [{ content: attachment }],
        },
      },
    });
    assert.equal(updated.status, 200, updated.text);
    const calls = changes(editor, id);
    for (const [name, call] of [
      ['edit', calls.edit],
      ['annotate', calls.annotate],
      ['sign', calls.sign],
    ] as const) {
      const response = await call();
      assert.equal(response.status, 200, `${name}: ${response.text}`);
    }
    const doc = await read(id);
    assert.equal(doc.documentTitle, 'Edited by the editor');
    assert.equal(doc.isSigned, true);
    assert.equal(doc.file.length, 1, 'the attachment is the editor’s');
    const audit = await server.app.deps.db
      .selectFrom('audit_log')
      .select(['activity_type', 'actor_id'])
      .where('object_id', '=', id)
      .where('activity_type', 'in', ['documentEdited', 'documentAnnotated', 'documentSigned'])
      .execute();
    assert.deepEqual(new Set(audit.map((r) => r.actor_id)), new Set(['edna']));
    // The verify endpoint reads the signature dictionary: made in the editor's name.
    const report = await server.api('GET', `/documents/${id}/verify`, { token: editor });
    assert.equal(report.status, 200, report.text);
    assert.deepEqual(
      report.body.signatures.map((s: { signerName: string }) => s.signerName),
      ['Edna Editor'],
    );
    if (hasTool('pdfsig')) {
      const bytes = await fetch(
        `${server.url}/api/v1/files/loadFile/hash/${doc.pdfFile.content}?token=${owner}`,
      );
      const path = await space.write(`${id}.pdf`, Buffer.from(await bytes.arrayBuffer()));
      const verdicts = await pdfsig(path);
      assert.equal(verdicts.length, 1);
      assert.equal(verdicts[0]?.validation, 'Signature is Valid.', verdicts[0]?.raw);
    }
  });

  it('"view = read-only": the viewer reads the document but every change and signature is 403; a user of the same organization without a share and a stranger get 404 (Contract: "one the caller may not see")', async () => {
    const id = await aSharedDocument('Shared for viewing');
    const before = await read(id);
    assert.equal((await server.api('GET', `/documents/${id}`, { token: viewer })).status, 200);
    for (const [name, call] of Object.entries(changes(viewer, id)))
      assertRefused(await call(), 403, 'FORBIDDEN', `viewer ${name}`);
    for (const [who, token] of [
      ['member', member],
      ['stranger', stranger],
    ] as const) {
      assertRefused(await server.api('GET', `/documents/${id}`, { token }), 404, 'NOT_FOUND', `${who} read`);
      for (const [name, call] of Object.entries(changes(token, id)))
        assertRefused(await call(), 404, 'NOT_FOUND', `${who} ${name}`);
    }
    const after = await read(id);
    assert.equal(after._version, before._version, 'nothing was changed');
  });

  it('"edit = edit rights" is the document’s content: deleting it, sharing it, moving it between folders, transferring it, sealing it with the organisation key and its audit trail stay with the owner and administrators (403 to the editor)', async () => {
    await server.api('PUT', '/settings/properties', {
      token: await server.adminToken(),
      body: { ownerTransferEnabled: true },
    });
    const id = await aSharedDocument('Owner keeps the rest');
    const folder = await server.api('POST', '/folders', {
      token: editor,
      body: { name: 'Editor folder', isShared: false, parentFolderId: null },
    });
    const refused: [string, ApiResponse][] = [
      [
        'move',
        await server.api('PUT', `/documents/edit/${await version(id)}`, {
          token: editor,
          body: { id, folder: folder.body.id },
        }),
      ],
      [
        'share',
        await server.api('POST', '/share', {
          token: editor,
          body: { id, data: [{ sharePurpose: 'view', shareTo: 'mel' }] },
        }),
      ],
      [
        'transfer',
        await server.api('PUT', '/documents/owner', { token: editor, body: { id, owner: 'edna' } }),
      ],
      [
        'seal',
        await server.api('PUT', `/documents/seal/${await version(id)}`, {
          token: editor,
          body: { id, certificate: true },
        }),
      ],
      ['audit trail', await server.api('GET', `/documents/${id}/audit`, { token: editor })],
    ];
    for (const [name, response] of refused) assertRefused(response, 403, 'FORBIDDEN', name);
    const deleted = await server.api('DELETE', '/documents', {
      token: editor,
      body: { documents: [{ id }] },
    });
    assert.equal(deleted.status, 200, deleted.text);
    assert.equal(deleted.body.errors, true, 'the editor may not delete it (spec Errors 4: listed)');
    assert.equal((await read(id)).documentTitle, 'Owner keeps the rest');
  });

  it('"edit = edit rights" last as long as the share: once its `validUntil` has passed, the editor is refused (403) and still reads nothing more than a recipient does', async () => {
    const id = await aSharedDocument('Short edit', {
      validUntil: new Date(clock.now().getTime() + 60_000).toISOString(),
    });
    assert.equal((await changes(editor, id).edit()).status, 200);
    clock.advance(2 * 60_000);
    assertRefused(await changes(editor, id).update(), 403, 'FORBIDDEN', 'expired edit share');
    assertRefused(await changes(editor, id).sign(), 403, 'FORBIDDEN', 'expired edit share sign');
    assert.equal((await server.api('GET', `/documents/${id}`, { token: editor })).status, 200);
  });
});

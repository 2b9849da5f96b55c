import { bootstrapAdmin } from '../../src/users/bootstrap-admin.js';
import { RIGHTS } from '../../src/core/access/roles.js';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { createUser, startServer, upload, type TestServer } from '../helpers/server.js';
import { shareTokenOf, startSmtp, type TestSmtp } from '../helpers/smtp.js';

/**
 * The access matrix's world (issue 20): tenant A with one organization, an owner with a document
 * (with a file and an attachment, in a private folder), a template, a webhook, a stamp, a contact, an
 * enum, a draft, a definition and a document type only the owner may use, and a share of that
 * document to external recipients protected by a password; a plain user and the administrators of
 * the same organization; tenant B with a stranger. Two more users of the owner's organization are
 * recipients (issue 24 item 11): the editor and the viewer, to whom `aSharedDocument` shares a new
 * document for `edit` and for `view`.
 */
export const ACTORS = [
  'anonymous',
  'stranger',
  'member',
  'recipientLocked',
  'recipientUnlocked',
  'orgAdmin',
  'globalAdmin',
  'owner',
] as const;
export type Actor = (typeof ACTORS)[number];
/** Users of the owner's organization a document is shared with (issue 24 item 11). */
export const COLLABORATORS = ['editor', 'viewer'] as const;
export type Collaborator = (typeof COLLABORATORS)[number];

export interface World {
  server: TestServer;
  smtp: TestSmtp;
  tokens: Record<Actor, string | undefined>;
  ids: Record<string, string>;
  /** Every id and title of the owner's that no one else may learn. */
  secrets: string[];
  /** A new document of the owner's in the private folder (for rows that change or delete it). */
  aDocument(title?: string): Promise<string>;
  /** A new share of a document of the owner's to two external recipients with passwords. */
  aProtectedShare(documentId?: string): Promise<{ shareId: string; locked: string; unlocked: string }>;
  /** The document's current `_version` (change calls carry it in the path). */
  versionOf(documentId: string): Promise<number>;
  /** Sessions of the users documents are shared with (`aSharedDocument`). */
  collaborators: Record<Collaborator, string>;
  /** A new document of the owner's shared for `edit` with the editor and for `view` with the viewer. */
  aSharedDocument(): Promise<{ id: string; version: number }>;
  /**
   * A new document of the owner's in a folder nested in a private folder that is shared (POST /share of
   * the folder) for `edit` with the editor and for `view` with the viewer: it inherits both shares.
   */
  aDocumentInSharedFolder(): Promise<{ id: string; version: number }>;
  close(): Promise<void>;
}

const PASSWORD = 'user-password-1';
let shareCount = 0;

export async function buildWorld(): Promise<World> {
  const smtp = await startSmtp();
  const server = await startServer({
    env: {
      SMTP_URL: smtp.url,
      PUBLIC_URL: 'https://sign.example.test',
      WEBHOOK_ALLOW_PRIVATE: 'true',
    },
  });
  const root = await server.adminToken();
  const rights = [...RIGHTS];
  // Same rights for the owner and the plain user: what keeps them apart is ownership, not rights.
  const ownerId = await createUser(server, { name: 'owner', email: 'owner@example.test', rights });
  const memberId = await createUser(server, { name: 'member', email: 'member@example.test', rights });
  const orgAdminId = await createUser(server, { name: 'orgadmin', role: 'organizationAdmin', rights });
  await createUser(server, { name: 'globaladmin', role: 'globalAdmin', rights });
  for (const name of COLLABORATORS) await createUser(server, { name, email: `${name}@example.test`, rights });
  // Receives documents moved by PUT /documents/owner, so no actor's view changes.
  await createUser(server, { name: 'heir', email: 'heir@example.test' });
  // Tenant B: its administrator makes the stranger, as `signery create-admin other` would start it.
  await bootstrapAdmin(server.app.deps, { tenant: 'other', name: 'other-admin', password: PASSWORD });
  const otherAdmin = await server.login('other-admin', PASSWORD, { tenant: 'other' });
  await createUser(server, { name: 'stranger', email: 'stranger@example.org', rights }, otherAdmin);

  // spec: PUT /documents/owner "owner transfer, when enabled".
  await server.api('PUT', '/settings/properties', { token: root, body: { ownerTransferEnabled: true } });
  const owner = await server.login('owner', PASSWORD);
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await server.api(method, path, { token: owner, body });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${response.text}`);
    return response.body;
  };
  const folder = (await call('POST', '/folders', { name: 'Private', isShared: false, parentFolderId: null }))
    .id;
  const aDocument = async (title = 'Owner private contract', into = folder) => {
    const content = await upload(server, owner, makePdf({ lines: ['Owner private contract'] }));
    const attachment = await upload(server, owner, makePdf({ title: 'Annex' }));
    const created = await call('POST', '/documents', {
      body: { documentTitle: title, pdfFile: { content }, file: [{ content: attachment }] },
      optionalData: { folder: into },
    });
    return created.results[0].documentId as string;
  };
  const document = await aDocument();
  const shown = (await call('GET', `/documents/${document}`)).results[0];
  const versionOf = async (id: string) =>
    (await call('GET', `/documents/${id}`)).results[0]._version as number;

  const aProtectedShare = async (documentId = document) => {
    const n = ++shareCount;
    const shares = await call('POST', '/share', {
      id: documentId,
      data: [
        { sharePurpose: 'sign', shareTo: `locked${n}@example.org`, password: `locked-pass-${n}` },
        {
          sharePurpose: 'sign',
          shareTo: `unlocked${n}@example.org`,
          password: `unlocked-pass-${n}`,
          rights: ['delegate'],
        },
      ],
    });
    const locked = shareTokenOf(await smtp.waitFor(`locked${n}@example.org`));
    const link = shareTokenOf(await smtp.waitFor(`unlocked${n}@example.org`));
    const unlock = await server.api('POST', '/share/unlock', {
      token: link,
      body: { password: `unlocked-pass-${n}` },
    });
    if (unlock.status !== 200) throw new Error(`unlock: ${unlock.status} ${unlock.text}`);
    // Contract (Sharing): the unlock answers a recipient session `token`; before that change the link
    // itself was unlocked.
    const unlocked = (unlock.body.token as string | undefined) ?? link;
    return { shareId: shares[1].shareId as string, locked, unlocked };
  };
  const share = await aProtectedShare();
  const aSharedDocument = async () => {
    const id = await aDocument('Shared contract');
    await call('POST', '/share', {
      id,
      data: [
        { sharePurpose: 'edit', shareTo: 'editor' },
        { sharePurpose: 'view', shareTo: 'viewer' },
      ],
    });
    return { id, version: await versionOf(id) };
  };
  // A private folder of the owner's shared for edit with the editor and for view with the viewer,
  // with a folder nested in it: what goes in the nested folder inherits both shares (spec Folder).
  const sharedFolder = (
    await call('POST', '/folders', { name: 'Team', isShared: false, parentFolderId: null })
  ).id as string;
  await call('POST', '/share', {
    id: sharedFolder,
    data: [
      { sharePurpose: 'edit', shareTo: 'editor' },
      { sharePurpose: 'view', shareTo: 'viewer' },
    ],
  });
  const nestedFolder = (
    await call('POST', '/folders', { name: 'Nested', isShared: false, parentFolderId: sharedFolder })
  ).id as string;
  const aDocumentInSharedFolder = async () => {
    const id = await aDocument('Contract in a shared folder', nestedFolder);
    return { id, version: await versionOf(id) };
  };

  const templateFile = await upload(server, owner, makePdf({ title: 'Template' }));
  const template = (
    await call('POST', '/templates', { data: { name: 'Owner template', file: templateFile } })
  ).id;
  const webhook = (
    await call('POST', '/webhooks', { type: 'organization', callbackUrl: 'http://127.0.0.1:9/owner-hook' })
  ).id;
  const stampFile = await upload(server, owner, PNG_1PX, { name: 'stamp.png', type: 'image/png' });
  const stamp = (await call('POST', '/stamps', { name: 'Owner stamp', file: stampFile })).id;
  const contact = (await call('POST', '/contacts', { name: 'Owner contact', email: 'c@example.org' })).id;
  await call('POST', '/enums', { name: 'ownerenum', label: 'Owner enum' });
  const draftFile = await upload(server, owner, makePdf({ title: 'Draft' }));
  const draft = (
    await call('POST', '/drafts', { data: { documentTitle: 'Owner draft', pdfFile: { content: draftFile } } })
  ).id;
  // Document definitions serve the whole tenant: a global administrator makes one.
  const globalAdmin = await server.login('globaladmin', PASSWORD);
  const definitionFile = await upload(server, globalAdmin, makePdf({ title: 'Definition' }));
  const definition = await server.api('POST', '/definitions/documents/name', {
    token: globalAdmin,
    body: { name: 'orgdef', templateFile: definitionFile },
  });
  if (definition.status !== 200) throw new Error(`definition: ${definition.status} ${definition.text}`);
  // spec Documents rule 4: a document type only the owner may use (its definition's `usableBy`).
  const ownerType = await server.api('POST', '/definitions/documents/name', {
    token: globalAdmin,
    body: { name: 'ownertype', usableBy: { users: ['owner'] } },
  });
  if (ownerType.status !== 200) throw new Error(`definition: ${ownerType.status} ${ownerType.text}`);

  const tokens: Record<Actor, string | undefined> = {
    anonymous: undefined,
    stranger: await server.login('stranger', PASSWORD, { tenant: 'other' }),
    member: await server.login('member', PASSWORD),
    recipientLocked: share.locked,
    recipientUnlocked: share.unlocked,
    orgAdmin: await server.login('orgadmin', PASSWORD),
    globalAdmin,
    owner,
  };
  const ids: Record<string, string> = {
    document,
    folder,
    file: shown.pdfFile.content,
    attachment: shown.file[0].content ?? shown.file[0].hash ?? shown.file[0].id,
    template,
    webhook,
    stamp,
    contact,
    enum: 'ownerenum',
    draft,
    definition: 'orgdef',
    ownerType: 'ownertype',
    owner: ownerId,
    member: memberId,
    orgAdmin: orgAdminId,
    shareId: share.shareId,
  };
  return {
    server,
    smtp,
    tokens,
    ids,
    secrets: [
      document,
      folder,
      template,
      webhook,
      stamp,
      contact,
      draft,
      ids.file!,
      'Owner private contract',
    ],
    aDocument,
    aProtectedShare,
    versionOf,
    collaborators: {
      editor: await server.login('editor', PASSWORD),
      viewer: await server.login('viewer', PASSWORD),
    },
    aSharedDocument,
    aDocumentInSharedFolder,
    async close() {
      await server.close();
      await smtp.close();
    },
  };
}

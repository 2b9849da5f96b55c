import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { upload } from '../helpers/server.js';
import { securityHeaderProblem } from '../helpers/security-headers.js';
import { ACTORS, buildWorld, COLLABORATORS, type Actor, type Collaborator, type World } from './scenario.js';

/**
 * Who may call what (issue 20, "Deliver as well"): every route of the running app × {anonymous, a
 * stranger of another tenant, a plain user of the owner's organization, the external recipient of a
 * password-protected share before and after unlocking, the organization's administrator, a global
 * administrator} — and the owner, whose answer shows the request is one that succeeds, so the others
 * are refused by authorization and not by validation. One row per route: a route without a row, or a
 * row without a route, fails the first test, so no route is added without deciding who may call it.
 *
 * What each expectation means:
 * - ok: 2xx; public: a route that asks for no credentials (never 401/403);
 * - own: acts on the caller's own account or tenant (any answer below 500), never showing the owner's data;
 * - fails: any 4xx (a call no one can make succeed here, e.g. a wrong code; only authorization is compared);
 * - listed: 200 with `errors: true` (spec Errors 4: a refused delete lists the item, it is not a 4xx);
 * - hidden: 404 NOT_FOUND (Contract: "unknown id, or one the caller may not see (never leak existence)");
 *   a stranger may also get 401;
 * - forbidden: 403 FORBIDDEN (Contract: "right or role missing"), for a caller who may see the resource;
 * - unauth: 401 UNAUTHENTICATED (Contract: "token missing…"; a share link works on recipient routes only);
 * - mfa: 403 MFA_REQUIRED (Contract, Sharing: "the link token stays locked (403 MFA_REQUIRED) for
 *   everyone who holds it").
 */
type Expect = 'ok' | 'public' | 'own' | 'fails' | 'listed' | 'hidden' | 'forbidden' | 'unauth' | 'mfa';

interface Call {
  path: string;
  body?: unknown;
  query?: Record<string, string>;
  form?: { fields?: Record<string, string>; file?: { name: string; type: string; bytes: Buffer } };
  /** Answered redirects are judged as they are, not followed (fetch would follow a loop until it fails). */
  manual?: boolean;
  /** Tokens this row's request uses instead of the world's (a share made for the row). */
  as?: Partial<Record<Actor, string>>;
}

/**
 * - public: every actor `public`;
 * - self: a call on the caller's own account, files or tenant: recipients 401, everyone else `own`;
 * - owned: a call on the owner's resource: stranger and member `hidden`, administrators of the
 *   organization `ok` (src/core/access/document-access.ts: "the owner, or an administrator of the document's organization");
 * - admin: user and tenant administration: member, owner and stranger `forbidden` (a role check made
 *   before any lookup, the same for every id), administrators `ok`;
 * - recipient: a recipient route on the owner's shared document: the locked link `mfa`, the unlocked
 *   session `ok`, internal callers who are not recipients `hidden`;
 * - typed: a call naming the world's `ownertype`, a document type whose definition's `usableBy` names
 *   the owner alone (spec Documents rule 4: "rights on both folder and document type"): the owner and
 *   the global administrator (who changes definitions) `ok`, member and organization administrator
 *   `forbidden`, the stranger `fails` (tenant B has no such type: 400, as for any unknown type).
 */
type Kind = 'public' | 'self' | 'owned' | 'admin' | 'recipient' | 'typed';

interface Row {
  route: string;
  kind: Kind;
  call: (w: World, actor: Actor) => Promise<Call> | Call;
  expect?: Partial<Record<Actor, Expect>>;
  /** Why the row differs from its kind's defaults (spec, Contract or issue). */
  why?: string;
}

const DEFAULTS: Record<Kind, Record<Actor, Expect>> = {
  public: {
    anonymous: 'public',
    stranger: 'public',
    member: 'public',
    recipientLocked: 'public',
    recipientUnlocked: 'public',
    orgAdmin: 'public',
    globalAdmin: 'public',
    owner: 'public',
  },
  self: {
    anonymous: 'unauth',
    stranger: 'own',
    member: 'own',
    recipientLocked: 'unauth',
    recipientUnlocked: 'unauth',
    orgAdmin: 'own',
    globalAdmin: 'own',
    owner: 'ok',
  },
  owned: {
    anonymous: 'unauth',
    stranger: 'hidden',
    member: 'hidden',
    recipientLocked: 'unauth',
    recipientUnlocked: 'unauth',
    orgAdmin: 'ok',
    globalAdmin: 'ok',
    owner: 'ok',
  },
  admin: {
    anonymous: 'unauth',
    // The role is checked before any lookup: the same 403 for every id, so nothing leaks.
    stranger: 'forbidden',
    member: 'forbidden',
    recipientLocked: 'unauth',
    recipientUnlocked: 'unauth',
    orgAdmin: 'ok',
    globalAdmin: 'ok',
    owner: 'forbidden',
  },
  recipient: {
    anonymous: 'unauth',
    stranger: 'hidden',
    member: 'hidden',
    recipientLocked: 'mfa',
    recipientUnlocked: 'ok',
    orgAdmin: 'hidden',
    globalAdmin: 'hidden',
    owner: 'hidden',
  },
  typed: {
    anonymous: 'unauth',
    stranger: 'fails',
    member: 'forbidden',
    recipientLocked: 'unauth',
    recipientUnlocked: 'unauth',
    orgAdmin: 'forbidden',
    globalAdmin: 'ok',
    owner: 'ok',
  },
};

const V = '/api/v1';
/** Internal sessions on a route that serves share links only: any 4xx. */
const INTERNAL_FAIL: Partial<Record<Actor, Expect>> = {
  stranger: 'fails',
  member: 'fails',
  orgAdmin: 'fails',
  globalAdmin: 'fails',
  owner: 'fails',
};
const pdf = () => ({ name: 'x.pdf', type: 'application/pdf', bytes: makePdf() });
const png = () => ({ name: 'x.png', type: 'image/png', bytes: PNG_1PX });
const ownerUpload = (w: World, bytes = makePdf()) => upload(w.server, w.tokens.owner!, bytes);
/** A new document of the owner's, for rows that change or delete it, with its current version. */
const fresh = async (w: World) => {
  const id = await w.aDocument('Owner private contract');
  return { id, version: await w.versionOf(id) };
};
/** A signature image of the owner's (POST /files/signature: theirs alone, spec Files usage rule 2). */
const ownerSignatureImage = (w: World) =>
  upload(w.server, w.tokens.owner!, PNG_1PX, { path: '/files/signature', name: 's.png', type: 'image/png' });
/** A sign call on a fresh document of the owner's, with the owner's signature image. */
const ownerSigns = async (w: World): Promise<Call> => {
  const { id, version } = await fresh(w);
  const image = await ownerSignatureImage(w);
  return { path: `${V}/documents/sign/${version}`, body: { id, signatures: [SIGNATURE(image)] } };
};
const SIGNATURE = (blob?: string) => ({
  type: 'signature',
  pages: [1],
  position: { percentX: 0.1, percentY: 0.8, percentWidth: 0.2, percentHeight: 0.05 },
  ...(blob ? { blob } : {}),
});

const ROWS: Row[] = [
  // Health, documentation and the signer's page: no credentials (Contract: GET /healthz, /readyz,
  // /api/v1/ping, openapi.json and the docs page; issue 9 the signer's page).
  { route: 'GET /healthz', kind: 'public', call: () => ({ path: '/healthz' }) },
  { route: 'GET /readyz', kind: 'public', call: () => ({ path: '/readyz' }) },
  { route: 'GET /metrics', kind: 'public', call: () => ({ path: '/metrics' }) },
  { route: `GET ${V}/ping`, kind: 'public', call: () => ({ path: `${V}/ping` }) },
  { route: `GET ${V}/openapi.json`, kind: 'public', call: () => ({ path: `${V}/openapi.json` }) },
  { route: `GET ${V}/docs`, kind: 'public', call: () => ({ path: `${V}/docs` }) },
  { route: `GET ${V}/docs/*`, kind: 'public', call: () => ({ path: `${V}/docs/static/swagger-ui.css` }) },
  { route: `GET ${V}/docs/json`, kind: 'public', call: () => ({ path: `${V}/docs/json` }) },
  { route: `GET ${V}/docs/yaml`, kind: 'public', call: () => ({ path: `${V}/docs/yaml` }) },
  {
    route: `GET ${V}/docs/static/index.html`,
    kind: 'public',
    call: () => ({ path: `${V}/docs/static/index.html`, manual: true }),
  },
  {
    route: `GET ${V}/docs/static/swagger-initializer.js`,
    kind: 'public',
    call: () => ({ path: `${V}/docs/static/swagger-initializer.js` }),
  },
  // Issue 25: the docs page's style sheet (phones).
  {
    route: `GET ${V}/docs/static/theme/signery.css`,
    kind: 'public',
    call: () => ({ path: `${V}/docs/static/theme/signery.css` }),
  },
  { route: 'GET /s/:token', kind: 'public', call: (w) => ({ path: `/s/${w.tokens.recipientLocked}` }) },
  // Issue 20 item 10: the signer page's unknown addresses answer an HTML page, for everyone.
  { route: 'GET /s', kind: 'public', call: () => ({ path: '/s' }) },
  { route: 'GET /s/*', kind: 'public', call: () => ({ path: '/s/not-a-link/deeper' }) },
  { route: 'GET /sign', kind: 'public', call: () => ({ path: '/sign' }) },
  { route: 'GET /sign/:documentId', kind: 'public', call: (w) => ({ path: `/sign/${w.ids.document}` }) },
  // Issue 40 item 9: the senders' prepare page, an HTML shell for anyone; everything it does goes
  // through the API with the sender's session or API key (the rows of those routes).
  { route: 'GET /prepare', kind: 'public', call: () => ({ path: '/prepare' }) },
  {
    route: 'GET /prepare/:documentId',
    kind: 'public',
    call: (w) => ({ path: `/prepare/${w.ids.document}` }),
  },
  // Issue 42: the same shell at the link mailed to an agent key's owner; deciding goes through
  // GET /agent-actions/:id and POST .../approve|reject, whose rows check who may.
  {
    route: 'GET /approve/:id',
    kind: 'public',
    call: () => ({ path: '/approve/0b5e7c1a-3f2d-4e8b-9a6c-1d2e3f4a5b6c' }),
  },
  // Issue 23 item 2: the development CA's CRL and OCSP responder, which relying parties fetch anonymously.
  { route: 'GET /pki/dev-ca.crl', kind: 'public', call: () => ({ path: '/pki/dev-ca.crl' }) },
  { route: 'POST /pki/ocsp', kind: 'public', call: () => ({ path: '/pki/ocsp', body: {} }) },
  { route: 'GET /pki/ocsp/*', kind: 'public', call: () => ({ path: '/pki/ocsp/MAA%3D' }) },
  { route: 'GET /web/assets/:name', kind: 'public', call: () => ({ path: '/web/assets/none.js' }) },
  // Issue 27: the public verification page and its check of an uploaded PDF, for anyone (nothing kept).
  { route: 'GET /verify', kind: 'public', call: () => ({ path: '/verify' }) },
  { route: 'POST /verify', kind: 'public', call: () => ({ path: '/verify', form: { file: pdf() } }) },
  // Issue 25: the service's own address and its icon, for anyone who opens them in a browser.
  { route: 'GET /', kind: 'public', call: () => ({ path: '/' }) },
  { route: 'GET /favicon.svg', kind: 'public', call: () => ({ path: '/favicon.svg' }) },
  { route: 'GET /favicon.ico', kind: 'public', call: () => ({ path: '/favicon.ico' }) },

  // Sessions and keys.
  {
    route: `POST ${V}/login`,
    kind: 'public',
    call: () => ({ path: `${V}/login`, body: { name: 'owner', password: 'user-password-1' } }),
  },
  {
    route: `GET ${V}/login`,
    kind: 'public',
    why: 'spec: GET /login without a token is 200 {logged:false}; a share link is no session (401)',
    call: () => ({ path: `${V}/login` }),
    expect: { recipientLocked: 'unauth', recipientUnlocked: 'unauth' },
  },
  {
    route: `GET ${V}/logout`,
    kind: 'self',
    // Logging out ends the token: each actor logs out a session of its own made for this row.
    call: () => ({ path: `${V}/logout` }),
  },
  {
    route: `POST ${V}/login/recovery`,
    kind: 'self',
    call: () => ({ path: `${V}/login/recovery`, body: { recoveryCode: 'not-a-code' } }),
    why: 'no recovery code is valid for an account without MFA: every session holder gets a 4xx',
    expect: { stranger: 'fails', member: 'fails', orgAdmin: 'fails', globalAdmin: 'fails', owner: 'fails' },
  },
  {
    route: `POST ${V}/login/totp`,
    kind: 'self',
    call: () => ({ path: `${V}/login/totp`, body: { code: '000000' } }),
    expect: { owner: 'fails' },
  },
  {
    route: `POST ${V}/login/mfa`,
    kind: 'self',
    call: () => ({ path: `${V}/login/mfa`, body: { password: 'user-password-1' } }),
    why: 'the password asked again (issue 37 item 5): a caller whose password differs gets 403, still their own account',
  },
  { route: `DELETE ${V}/login/mfa`, kind: 'self', call: () => ({ path: `${V}/login/mfa` }) },
  { route: `GET ${V}/api/key`, kind: 'self', call: () => ({ path: `${V}/api/key` }) },
  {
    route: `POST ${V}/api/key`,
    kind: 'self',
    call: () => ({ path: `${V}/api/key`, body: { description: 'k' } }),
  },
  {
    route: `DELETE ${V}/api/key/:token`,
    kind: 'owned',
    why: 'Contract: the path holds the key to revoke; only its holder (or whoever holds the key itself) may',
    call: async (w) => {
      const key = await w.server.api('POST', '/api/key', { token: w.tokens.owner, body: {} });
      return { path: `${V}/api/key/${(key.body.id as string).split('_').slice(0, 2).join('_')}` };
    },
    expect: { anonymous: 'unauth', orgAdmin: 'hidden', globalAdmin: 'hidden' },
  },
  { route: `GET ${V}/login/oidc`, kind: 'public', call: () => ({ path: `${V}/login/oidc` }) },
  { route: `GET ${V}/login/oidc/:provider`, kind: 'public', call: () => ({ path: `${V}/login/oidc/none` }) },
  {
    route: `GET ${V}/login/oidc/:provider/callback`,
    kind: 'public',
    call: () => ({ path: `${V}/login/oidc/none/callback` }),
  },

  // Users and the tenant (spec: administrators manage user accounts; PUT /counters super-administrators).
  {
    route: `POST ${V}/users`,
    kind: 'admin',
    call: (_w, actor) => ({
      path: `${V}/users`,
      body: { name: `made-by-${actor}`, password: 'user-password-1' },
    }),
  },
  {
    route: `GET ${V}/users/:id`,
    kind: 'admin',
    call: (w) => ({ path: `${V}/users/${w.ids.member}` }),
    expect: { stranger: 'hidden', member: 'ok', owner: 'hidden' },
    why: 'a user reads their own record (the member is the target here), administrators any; others 404',
  },
  {
    route: `PUT ${V}/users/:id`,
    kind: 'admin',
    call: (w) => ({ path: `${V}/users/${w.ids.member}`, body: { displayName: 'Member' } }),
  },
  {
    route: `DELETE ${V}/users/:id`,
    kind: 'admin',
    call: async (w, actor) => {
      const made = await w.server.api('POST', '/users', {
        token: w.tokens.orgAdmin,
        body: { name: `doomed-${actor}`, password: 'user-password-1' },
      });
      return { path: `${V}/users/${made.body.id}` };
    },
  },
  {
    route: `PUT ${V}/users/:id/upload`,
    kind: 'admin',
    why: 'the user (here the owner, for their own account) or an administrator',
    call: async (w) => ({
      path: `${V}/users/${w.ids.owner}/upload`,
      body: {
        signature: [
          {
            imageId: await ownerSignatureImage(w),
          },
        ],
      },
    }),
    expect: { owner: 'ok', stranger: 'hidden', member: 'hidden' },
  },
  {
    route: `PUT ${V}/users/activate`,
    kind: 'public',
    call: () => ({
      path: `${V}/users/activate`,
      body: { activationToken: 'nope', password: 'user-password-2' },
    }),
    why: 'public (the activation token is the credential); an unknown one is a 4xx for everyone',
    expect: Object.fromEntries(ACTORS.map((a) => [a, 'fails'])),
  },
  { route: `POST ${V}/groups/search`, kind: 'self', call: () => ({ path: `${V}/groups/search`, body: {} }) },
  {
    route: `PUT ${V}/configuration`,
    kind: 'self',
    call: () => ({ path: `${V}/configuration`, body: { configuration: { theme: 'dark' } } }),
  },
  {
    route: `POST ${V}/configuration/images`,
    kind: 'self',
    call: async (w) => ({
      path: `${V}/configuration/images`,
      body: {
        signature: [
          {
            imageId: await ownerSignatureImage(w),
          },
        ],
      },
    }),
  },
  {
    route: `GET ${V}/settings/properties`,
    kind: 'admin',
    why: 'tenant properties: src/core/settings/tenant-settings.ts TENANT_ADMINS (global and super administrators)',
    call: () => ({ path: `${V}/settings/properties` }),
    expect: { orgAdmin: 'forbidden' },
  },
  {
    route: `PUT ${V}/settings/properties`,
    kind: 'admin',
    why: 'tenant properties: src/core/settings/tenant-settings.ts TENANT_ADMINS (global and super administrators)',
    call: () => ({ path: `${V}/settings/properties`, body: { isLlmEnabled: false } }),
    expect: { orgAdmin: 'forbidden' },
  },
  {
    route: `GET ${V}/counters`,
    kind: 'admin',
    call: () => ({ path: `${V}/counters` }),
    expect: { orgAdmin: 'forbidden', globalAdmin: 'forbidden' },
    why: 'spec: PUT /counters super-administrator only; the read side likewise',
  },
  {
    route: `PUT ${V}/counters`,
    kind: 'admin',
    call: () => ({ path: `${V}/counters`, body: { counters: { n: 1 } } }),
    expect: { orgAdmin: 'forbidden', globalAdmin: 'forbidden' },
    why: 'spec: PUT /counters super-administrator only',
  },
  { route: `GET ${V}/wopi/extensions`, kind: 'self', call: () => ({ path: `${V}/wopi/extensions` }) },

  // Files.
  {
    route: `POST ${V}/files/saveFile`,
    kind: 'self',
    call: () => ({ path: `${V}/files/saveFile`, form: { file: pdf() } }),
  },
  {
    route: `POST ${V}/files/photo`,
    kind: 'self',
    call: () => ({ path: `${V}/files/photo`, form: { file: png() } }),
  },
  {
    route: `POST ${V}/files/signature`,
    kind: 'self',
    call: () => ({ path: `${V}/files/signature`, form: { file: png() } }),
  },
  {
    route: `POST ${V}/files/initials`,
    kind: 'self',
    call: () => ({ path: `${V}/files/initials`, form: { file: png() } }),
  },
  {
    route: `GET ${V}/files/loadFile/hash/:hash`,
    kind: 'owned',
    why: 'Contract: "the share token also reads that document\'s files through /files/loadFile/hash"',
    call: (w) => ({ path: `${V}/files/loadFile/hash/${w.ids.file}` }),
    expect: { recipientLocked: 'mfa', recipientUnlocked: 'ok' },
  },

  // Documents (spec Documents; access: owner, administrators of its organization, recipients).
  {
    route: `POST ${V}/documents`,
    kind: 'self',
    call: () => ({ path: `${V}/documents`, body: { body: { documentTitle: 'Mine' } } }),
  },
  {
    route: `DELETE ${V}/documents`,
    kind: 'owned',
    call: async (w) => ({ path: `${V}/documents`, body: { documents: [{ id: (await fresh(w)).id }] } }),
    why: 'spec Errors 4: DELETE /documents answers {errors, items}; a document the caller may not delete is listed',
    expect: { stranger: 'listed', member: 'listed' },
  },
  {
    route: `POST ${V}/documents/bulk/create`,
    kind: 'self',
    call: async (w) => ({
      path: `${V}/documents/bulk/create`,
      body: { body: {}, bulkFiles: [{ content: await ownerUpload(w), documentTitle: 'Bulk' }] },
    }),
  },
  {
    route: `GET ${V}/documents/:documentId`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/documents/${w.ids.document}` }),
  },
  {
    route: `PUT ${V}/documents/owner`,
    kind: 'owned',
    call: async (w) => ({ path: `${V}/documents/owner`, body: { id: (await fresh(w)).id, owner: 'heir' } }),
    why: "spec: owner transfer when enabled (tenant A enables it; the stranger's tenant does not: 403 before any lookup)",
    expect: { stranger: 'forbidden' },
  },
  {
    route: `PUT ${V}/documents/edit/:version`,
    kind: 'owned',
    call: async (w) => {
      const { id, version } = await fresh(w);
      return {
        path: `${V}/documents/edit/${version}`,
        body: { id, documentTitle: 'Renamed private contract' },
      };
    },
  },
  {
    route: `PUT ${V}/documents/:documentId`,
    kind: 'owned',
    call: async (w) => {
      const { id, version } = await fresh(w);
      return {
        path: `${V}/documents/${version}`,
        body: { id, body: { documentTitle: 'Updated private contract' } },
      };
    },
  },
  {
    route: `PUT ${V}/documents/:documentId/merge`,
    kind: 'owned',
    call: async (w) => {
      const { id, version } = await fresh(w);
      return { path: `${V}/documents/${id}/merge`, body: { version, files: [await ownerUpload(w)] } };
    },
    expect: { orgAdmin: 'own', globalAdmin: 'own' },
    why: "the merged file is the owner's upload, which an administrator may not use (spec Files usage rules)",
  },
  {
    route: `GET ${V}/revisions/document/:id/:revision`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/revisions/document/${w.ids.document}/1` }),
  },
  {
    route: `POST ${V}/folders`,
    kind: 'self',
    call: () => ({ path: `${V}/folders`, body: { name: 'Mine', isShared: false } }),
  },
  {
    route: `GET ${V}/folders/:id`,
    kind: 'owned',
    why: 'spec Folder: under a private folder private',
    call: (w) => ({ path: `${V}/folders/${w.ids.folder}` }),
  },

  // Templates (issue 20 item 11: visible to their owner, the users and groups named, and administrators).
  {
    route: `POST ${V}/templates`,
    kind: 'self',
    call: async (w) => ({
      path: `${V}/templates`,
      body: { data: { name: 'T', file: await ownerUpload(w) } },
    }),
  },
  {
    route: `PUT ${V}/templates`,
    kind: 'owned',
    why: 'issue 20 item 11; src/templates/save-template.ts: the owner or an administrator edits',
    call: (w) => ({ path: `${V}/templates`, body: { id: w.ids.template, data: { name: 'Owner template' } } }),
  },
  {
    route: `GET ${V}/templates/:templateId`,
    kind: 'owned',
    why: 'issue 20 item 11: "templates are visible to their owner, the users and groups named, and administrators"',
    call: (w) => ({ path: `${V}/templates/${w.ids.template}` }),
  },
  {
    route: `POST ${V}/drafts`,
    kind: 'self',
    call: () => ({ path: `${V}/drafts`, body: { data: { documentTitle: 'D' } } }),
  },
  {
    route: `PUT ${V}/drafts/:id/:version`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/drafts/${w.ids.draft}/1`, body: { data: { documentTitle: 'Owner draft' } } }),
    expect: { orgAdmin: 'hidden', globalAdmin: 'hidden' },
    why: "a draft is its author's own work in progress",
  },
  {
    route: `GET ${V}/drafts/:id`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/drafts/${w.ids.draft}` }),
    expect: { orgAdmin: 'hidden', globalAdmin: 'hidden' },
    why: "a draft is its author's own work in progress",
  },
  {
    route: `POST ${V}/definitions/documents/name`,
    kind: 'admin',
    call: async (w, actor) => ({
      path: `${V}/definitions/documents/name`,
      body: { name: `def-${actor}`, templateFile: await ownerUpload(w) },
    }),
    expect: { orgAdmin: 'forbidden', globalAdmin: 'own' },
    why: 'definitions serve the whole tenant: global and super administrators only; the template file is the owner’s upload (usage rule 4)',
  },
  {
    route: `PUT ${V}/definitions/documents/:name`,
    kind: 'admin',
    call: () => ({ path: `${V}/definitions/documents/orgdef`, body: { description: 'd' } }),
    expect: { orgAdmin: 'forbidden' },
    why: 'definitions serve the whole tenant: global and super administrators only',
  },
  {
    route: `GET ${V}/definitions/documents/:name`,
    kind: 'self',
    call: () => ({ path: `${V}/definitions/documents/orgdef` }),
  },
  {
    route: `GET ${V}/attachments/:id/zip`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/attachments/${w.ids.document}/zip` }),
  },
  {
    route: `GET ${V}/attachments/draft/:id/:hash`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/attachments/draft/${w.ids.draft}/${w.ids.attachment}` }),
    expect: { owner: 'own', orgAdmin: 'hidden', globalAdmin: 'hidden' },
    why: 'the draft has no attachment: only authorization is compared',
  },
  {
    route: `GET ${V}/attachments/:id/:hash`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/attachments/${w.ids.document}/${w.ids.attachment}` }),
  },

  // Sharing (spec Sharing; Contract: recipients).
  {
    route: `POST ${V}/share`,
    kind: 'owned',
    call: async (w) => ({
      path: `${V}/share`,
      body: { id: (await fresh(w)).id, data: [{ sharePurpose: 'view', shareTo: 'viewer@example.org' }] },
    }),
  },
  {
    route: `PUT ${V}/share`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/share`, body: { data: [{ shareId: w.ids.shareId, message: 'hello' }] } }),
  },
  {
    route: `POST ${V}/share/cancel`,
    kind: 'owned',
    call: async (w) => {
      const { id } = await fresh(w);
      await w.server.api('POST', '/share', {
        token: w.tokens.owner,
        body: { id, data: [{ sharePurpose: 'sign', shareTo: 'cancel@example.org' }] },
      });
      return { path: `${V}/share/cancel`, body: { id } };
    },
  },
  {
    route: `POST ${V}/share/reminder`,
    kind: 'owned',
    call: async (w) => {
      const { id } = await fresh(w);
      await w.server.api('POST', '/share', {
        token: w.tokens.owner,
        body: { id, data: [{ sharePurpose: 'sign', shareTo: 'remind@example.org' }] },
      });
      return { path: `${V}/share/reminder`, body: { documentId: id } };
    },
    expect: { orgAdmin: 'forbidden', globalAdmin: 'forbidden' },
    why: 'spec Reminders: "only the document owner or original sharer may send"; Contract: one who can see it: 403',
  },
  {
    route: `GET ${V}/share/document`,
    kind: 'recipient',
    call: (w) => ({ path: `${V}/share/document`, query: { id: w.ids.document! } }),
    why: "Contract: the recipient's read; internal users who are not recipients use GET /documents/:id",
  },
  {
    route: `GET ${V}/share/document/preview`,
    kind: 'recipient',
    call: (w) => ({ path: `${V}/share/document/preview`, query: { id: w.ids.document! } }),
    why: 'the first page of the read above, to the same callers',
  },
  {
    route: `GET ${V}/share/signed`,
    kind: 'recipient',
    call: () => ({ path: `${V}/share/signed` }),
    expect: { ...INTERNAL_FAIL, recipientUnlocked: 'fails' },
    why: 'issue 37 item 9: what an external recipient signed, once they acted (409 before); users download from GET /documents/:id',
  },
  {
    route: `PUT ${V}/share/reject`,
    kind: 'recipient',
    call: async (w) => {
      const { id, as } = await protectedShare(w);
      return { path: `${V}/share/reject`, body: { id, reason: 'no' }, as };
    },
  },
  {
    route: `POST ${V}/share/execute`,
    kind: 'recipient',
    call: (w) => ({ path: `${V}/share/execute`, body: { id: w.ids.document } }),
    expect: { recipientUnlocked: 'fails' },
    why: 'a sign share is signed, not executed: only authorization is compared',
  },
  {
    route: `POST ${V}/share/consent`,
    kind: 'recipient',
    call: (w) => ({ path: `${V}/share/consent`, body: { id: w.ids.document, sha256: '0'.repeat(64) } }),
    expect: { recipientUnlocked: 'fails' },
    why: 'issue 40: a statement that is not the one in force is 409: only authorization is compared',
  },
  {
    route: `PUT ${V}/share/delegate`,
    kind: 'recipient',
    call: async (w) => {
      const { id, as } = await protectedShare(w);
      return { path: `${V}/share/delegate`, body: { id, shareTo: 'delegate@example.org' }, as };
    },
  },
  {
    route: `POST ${V}/share/otp`,
    kind: 'recipient',
    call: () => ({ path: `${V}/share/otp`, body: { channel: 'email' } }),
    expect: { ...INTERNAL_FAIL, recipientLocked: 'own', recipientUnlocked: 'own' },
    why: 'a recipient-locked route (it serves the locked link); internal sessions have no share here',
  },
  {
    route: `POST ${V}/share/unlock`,
    kind: 'recipient',
    call: () => ({ path: `${V}/share/unlock`, body: { password: 'wrong-password' } }),
    expect: { ...INTERNAL_FAIL, recipientLocked: 'fails', recipientUnlocked: 'fails' },
    why: 'the unlock call is open to the locked link (its purpose); a wrong password is a 4xx',
  },
  { route: `GET ${V}/inbox`, kind: 'self', call: () => ({ path: `${V}/inbox` }) },
  {
    route: `POST ${V}/inbox/action`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/inbox/action`, body: { shareId: w.ids.shareId, action: 'approve' } }),
    expect: { owner: 'hidden', orgAdmin: 'hidden', globalAdmin: 'hidden' },
    why: "the share is an external recipient's: no internal user acts on it through the inbox",
  },

  // Signing.
  {
    route: `PUT ${V}/documents/sign/:version`,
    kind: 'owned',
    call: ownerSigns,
    expect: { orgAdmin: 'own', globalAdmin: 'own' },
    why: "the signature image is the owner's (usage rule 2): an administrator reaches the file check",
  },
  {
    route: `POST ${V}/documents/sign/:version`,
    kind: 'owned',
    call: ownerSigns,
    expect: { orgAdmin: 'own', globalAdmin: 'own' },
    why: "the signature image is the owner's (usage rule 2): an administrator reaches the file check",
  },
  {
    route: `PUT ${V}/share/document/sign/:version`,
    kind: 'recipient',
    call: async (w) => {
      const { id, as } = await protectedShare(w);
      const image = await w.server.api('POST', '/share/upload/signature', {
        token: as.recipientUnlocked,
        form: { file: png() },
      });
      return {
        path: `${V}/share/document/sign/${await w.versionOf(id)}`,
        body: { id, signatures: [SIGNATURE(image.body?.file?.id)] },
        as,
      };
    },
    expect: { owner: 'fails', orgAdmin: 'fails', globalAdmin: 'fails' },
    why: "the signature image is the recipient's upload, which no one else may use (usage rule 2)",
  },
  {
    route: `PUT ${V}/documents/seal/:version`,
    kind: 'owned',
    call: async (w) => {
      const { id, version } = await fresh(w);
      return { path: `${V}/documents/seal/${version}`, body: { id, certificate: true } };
    },
  },
  {
    route: `PUT ${V}/documents/annotate/:version`,
    kind: 'owned',
    call: async (w) => {
      const { id, version } = await fresh(w);
      return {
        path: `${V}/documents/annotate/${version}`,
        body: {
          id,
          images: [{ blob: await ownerUpload(w, PNG_1PX), pages: [1], position: SIGNATURE().position }],
        },
      };
    },
    expect: { orgAdmin: 'own', globalAdmin: 'own' },
    why: "the image is the owner's upload (usage rule 3): an administrator reaches the file check",
  },
  {
    route: `GET ${V}/documents/:documentId/verify`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/documents/${w.ids.document}/verify` }),
  },
  { route: `POST ${V}/verify`, kind: 'self', call: () => ({ path: `${V}/verify`, form: { file: pdf() } }) },
  {
    route: `POST ${V}/users/:id/certificate`,
    kind: 'admin',
    why: 'Contract: the user or an administrator (others: 404 No such user)',
    call: (w) => ({
      path: `${V}/users/${w.ids.owner}/certificate`,
      form: {
        file: { name: 'c.pem', type: 'application/x-pem-file', bytes: Buffer.from('not a certificate') },
      },
    }),
    expect: { stranger: 'hidden', member: 'hidden', owner: 'own', orgAdmin: 'own', globalAdmin: 'own' },
  },
  {
    route: `DELETE ${V}/users/:id/certificate/:certificate`,
    kind: 'admin',
    why: 'Contract: the user or an administrator (others: 404); no certificate: only authorization is compared',
    call: (w) => ({ path: `${V}/users/${w.ids.owner}/certificate/${'0'.repeat(64)}` }),
    expect: { stranger: 'hidden', member: 'hidden', owner: 'own', orgAdmin: 'own', globalAdmin: 'own' },
  },
  {
    route: `POST ${V}/documents/sign/:version/start/digest`,
    kind: 'owned',
    call: async (w) => {
      const { id, version } = await fresh(w);
      return {
        path: `${V}/documents/sign/${version}/start/digest`,
        body: { id, certificateHash: '0'.repeat(64), signatureProvider: 'internalUsb' },
      };
    },
    expect: { owner: 'own', orgAdmin: 'own', globalAdmin: 'own' },
    why: 'no certificate uploaded: the owner gets a 4xx too; only authorization is compared',
  },
  {
    route: `POST ${V}/documents/sign/:version/start/file`,
    kind: 'owned',
    call: async (w) => {
      const { id, version } = await fresh(w);
      return {
        path: `${V}/documents/sign/${version}/start/file`,
        body: { id, certificateHash: '0'.repeat(64), signatureProvider: 'internalUsb' },
      };
    },
    expect: { owner: 'own', orgAdmin: 'own', globalAdmin: 'own' },
    why: 'no certificate uploaded: the owner gets a 4xx too; only authorization is compared',
  },
  {
    route: `PUT ${V}/documents/sign/finish/digest`,
    kind: 'self',
    call: () => ({
      path: `${V}/documents/sign/finish/digest`,
      body: { sessionId: 'none', signedDigests: [{ originalDigest: 'AA==', signedDigest: 'AA==' }] },
    }),
    expect: { owner: 'own' },
  },
  {
    route: `PUT ${V}/documents/sign/finish/file`,
    kind: 'self',
    call: () => ({
      path: `${V}/documents/sign/finish/file`,
      form: { fields: { sessionId: 'none' }, file: pdf() },
    }),
    expect: { owner: 'own' },
  },

  // Search, reports and logs.
  { route: `POST ${V}/search`, kind: 'self', call: () => ({ path: `${V}/search`, body: {} }) },
  {
    route: `POST ${V}/search/locate`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/search/locate`, body: { id: w.ids.document } }),
  },
  {
    route: `POST ${V}/search/reports`,
    kind: 'self',
    call: () => ({ path: `${V}/search/reports`, body: { query: {} } }),
    expect: { member: 'ok' },
    why: "spec: reports need use_all_documents_export, which the member holds here: the tenant's documents",
  },
  {
    route: `POST ${V}/logs/search`,
    kind: 'self',
    call: () => ({ path: `${V}/logs/search`, body: { logsQuery: {} } }),
    expect: { member: 'ok' },
    why: 'the member holds view_logs here (Contract rights): the audit log is theirs to read',
  },
  {
    route: `GET ${V}/documents/:documentId/audit`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/documents/${w.ids.document}/audit` }),
  },
  {
    route: `DELETE ${V}/logs/scroll`,
    kind: 'self',
    call: () => ({ path: `${V}/logs/scroll`, body: { scrollId: 'none' } }),
    expect: { owner: 'own' },
  },

  // Recipient uploads (spec Files: external recipient uploads).
  ...['signature', 'initials', 'stamp'].map((what): Row => ({
    route: `POST ${V}/share/upload/${what}`,
    kind: 'recipient',
    call: () => ({ path: `${V}/share/upload/${what}`, form: { file: png() } }),
    expect: { stranger: 'own', member: 'own', orgAdmin: 'own', globalAdmin: 'own', owner: 'own' },
    why: 'an internal caller uploads for itself',
  })),
  ...['file', 'submittedFile'].map((what): Row => ({
    route: `POST ${V}/share/upload/${what}`,
    kind: 'recipient',
    call: () => ({ path: `${V}/share/upload/${what}`, form: { file: pdf() } }),
    expect: {
      stranger: 'own',
      member: 'own',
      orgAdmin: 'own',
      globalAdmin: 'own',
      owner: 'own',
      recipientUnlocked: 'own',
    },
    why: 'an internal caller uploads for itself',
  })),
  {
    route: `GET ${V}/share/stamp/:id`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/share/stamp/${w.ids.stamp}` }),
    expect: {
      recipientLocked: 'mfa',
      recipientUnlocked: 'hidden',
      orgAdmin: 'hidden',
      globalAdmin: 'hidden',
    },
    why: "spec: GET /share/stamp/{id}, the stamp image, for the recipient who uploaded it; a personal stamp is its owner's",
  },
  {
    route: `GET ${V}/share/oidc`,
    kind: 'recipient',
    call: () => ({ path: `${V}/share/oidc` }),
    expect: { ...INTERNAL_FAIL, recipientLocked: 'ok' },
  },
  {
    route: `GET ${V}/share/oidc/:provider`,
    kind: 'recipient',
    call: () => ({ path: `${V}/share/oidc/none` }),
    expect: { ...INTERNAL_FAIL, recipientLocked: 'fails', recipientUnlocked: 'fails' },
    why: 'no provider configured: only authorization is compared',
  },
  {
    route: `GET ${V}/share/oidc/:provider/callback`,
    kind: 'public',
    call: () => ({ path: `${V}/share/oidc/none/callback` }),
  },

  // Stamps (src/http/routes/stamps.ts: personal stamps are their owner's; 404 to anyone else).
  {
    route: `POST ${V}/stamps`,
    kind: 'self',
    call: async (w) => ({
      path: `${V}/stamps`,
      body: {
        name: 'S',
        file: await upload(w.server, w.tokens.owner!, PNG_1PX, { name: 's.png', type: 'image/png' }),
      },
    }),
  },
  { route: `POST ${V}/stamps/search`, kind: 'self', call: () => ({ path: `${V}/stamps/search`, body: {} }) },
  {
    route: `GET ${V}/stamps/:id`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/stamps/${w.ids.stamp}` }),
    expect: { orgAdmin: 'hidden', globalAdmin: 'hidden' },
    why: 'stamps route: "To its owner (personal) … 404 to anyone else"',
  },
  {
    route: `PUT ${V}/stamps/:id`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/stamps/${w.ids.stamp}`, body: { name: 'Owner stamp' } }),
    expect: { orgAdmin: 'hidden', globalAdmin: 'hidden' },
    why: 'stamps route: a personal stamp is changed by its owner only',
  },
  {
    route: `DELETE ${V}/stamps/:id`,
    kind: 'owned',
    call: async (w) => {
      const file = await upload(w.server, w.tokens.owner!, PNG_1PX, { name: 's.png', type: 'image/png' });
      const made = await w.server.api('POST', '/stamps', {
        token: w.tokens.owner,
        body: { name: 'Doomed', file },
      });
      return { path: `${V}/stamps/${made.body.id}` };
    },
    expect: { orgAdmin: 'hidden', globalAdmin: 'hidden' },
    why: 'stamps route: a personal stamp is deleted by its owner only',
  },
  {
    route: `GET ${V}/stamps/:id/image`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/stamps/${w.ids.stamp}/image` }),
    expect: { orgAdmin: 'hidden', globalAdmin: 'hidden' },
    why: 'stamps route: "To its owner (personal) … 404 to anyone else"',
  },

  // Contacts and enums: the organization's address book and lists.
  { route: `POST ${V}/contacts`, kind: 'self', call: () => ({ path: `${V}/contacts`, body: { name: 'C' } }) },
  {
    route: `PUT ${V}/contacts`,
    kind: 'owned',
    expect: { orgAdmin: 'hidden', globalAdmin: 'hidden' },
    why: "a contact is its owner's address book entry (src/contacts): 404 to anyone else",
    call: (w) => ({ path: `${V}/contacts`, body: { id: w.ids.contact, name: 'Owner contact' } }),
  },
  { route: `GET ${V}/contacts`, kind: 'self', call: () => ({ path: `${V}/contacts` }) },
  {
    route: `POST ${V}/contacts/search`,
    kind: 'self',
    call: () => ({ path: `${V}/contacts/search`, body: {} }),
  },
  {
    route: `GET ${V}/contacts/:id`,
    kind: 'owned',
    expect: { orgAdmin: 'hidden', globalAdmin: 'hidden' },
    why: "a contact is its owner's address book entry (src/contacts): 404 to anyone else",
    call: (w) => ({ path: `${V}/contacts/${w.ids.contact}` }),
  },
  {
    route: `DELETE ${V}/contacts/:id`,
    kind: 'owned',
    expect: { orgAdmin: 'hidden', globalAdmin: 'hidden' },
    why: "a contact is its owner's address book entry (src/contacts): 404 to anyone else",
    call: async (w) => {
      const made = await w.server.api('POST', '/contacts', {
        token: w.tokens.owner,
        body: { name: 'Doomed' },
      });
      return { path: `${V}/contacts/${made.body.id}` };
    },
  },
  {
    route: `POST ${V}/enums`,
    kind: 'self',
    call: (_w, actor) => ({ path: `${V}/enums`, body: { name: `enum${actor.toLowerCase()}` } }),
  },
  { route: `GET ${V}/enums`, kind: 'self', call: () => ({ path: `${V}/enums` }) },
  {
    route: `PUT ${V}/enums/:name/record`,
    kind: 'owned',
    call: () => ({ path: `${V}/enums/ownerenum/record`, body: { value: 'v', label: 'V' } }),
    expect: { member: 'forbidden' },
    why: "an enum is the organization's list: members read it; its owner and administrators change it (403)",
  },
  {
    route: `GET ${V}/enums/:name`,
    kind: 'owned',
    call: () => ({ path: `${V}/enums/ownerenum` }),
    expect: { member: 'ok' },
    why: "an enum is the organization's list: members read it",
  },
  {
    route: `DELETE ${V}/enums/:name`,
    kind: 'owned',
    call: async (w, actor) => {
      const name = `doomed${actor.toLowerCase()}`;
      await w.server.api('POST', '/enums', { token: w.tokens.owner, body: { name } });
      return { path: `${V}/enums/${name}` };
    },
    expect: { member: 'forbidden' },
    why: "an enum is the organization's list: members read it; its owner and administrators change it (403)",
  },

  // Webhooks (spec Webhooks: right use_webhooks; issue 20 item 11: changed or deleted only by its
  // creator or an administrator of its scope).
  {
    route: `POST ${V}/webhooks`,
    kind: 'self',
    call: () => ({
      path: `${V}/webhooks`,
      body: { type: 'organization', callbackUrl: 'http://127.0.0.1:9/hook' },
    }),
  },
  {
    route: `GET ${V}/events`,
    kind: 'self',
    call: () => ({ path: `${V}/events` }),
    expect: { member: 'ok' },
    why: 'issue 27 item 4: the feed lists the events of the caller’s own scope (tenant administrators the tenant, others their organization), never another tenant’s',
  },
  {
    route: `GET ${V}/webhooks`,
    kind: 'self',
    call: () => ({ path: `${V}/webhooks` }),
    expect: { member: 'ok' },
    why: 'issue 20 item 11: the list holds the webhooks the caller created (administrators: those of their scope), so a member lists none of the owner’s',
  },
  {
    route: `DELETE ${V}/webhooks/:webhookId`,
    kind: 'owned',
    call: async (w) => {
      const made = await w.server.api('POST', '/webhooks', {
        token: w.tokens.owner,
        body: { type: 'organization', callbackUrl: 'http://127.0.0.1:9/doomed' },
      });
      return { path: `${V}/webhooks/${made.body.id}` };
    },
    why: 'issue 20 item 11: "a webhook is changed or deleted only by its creator or an administrator of its scope"',
  },
  {
    route: `PUT ${V}/webhooks/:webhookId/owner`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/webhooks/${w.ids.webhook}/owner`, body: { owner: 'owner' } }),
    expect: { owner: 'forbidden' },
    why: 'issue 37 item 7: administrators of its scope transfer a webhook; its holder who is not one may not (403)',
  },
  {
    route: `GET ${V}/webhooks/:webhookId/deliveries`,
    kind: 'owned',
    call: (w) => ({ path: `${V}/webhooks/${w.ids.webhook}/deliveries` }),
    why: "issue 20 item 11: a webhook is its creator's or its scope administrator's (another member gets 404: its deliveries name the organization's documents)",
  },
  {
    route: `POST ${V}/webhooks/:webhookId/secret`,
    kind: 'owned',
    call: async (w) => {
      const made = await w.server.api('POST', '/webhooks', {
        token: w.tokens.owner,
        body: { type: 'organization', callbackUrl: 'http://127.0.0.1:9/rotated' },
      });
      return { path: `${V}/webhooks/${made.body.id}/secret`, body: {} };
    },
    why: 'issue 27: rotating a secret changes the webhook: its creator or an administrator of its scope',
  },
  {
    route: `POST ${V}/webhooks/:webhookId/replay`,
    kind: 'owned',
    call: (w) => ({
      path: `${V}/webhooks/${w.ids.webhook}/replay`,
      body: { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date().toISOString() },
    }),
    why: 'issue 27: a replay sends the webhook its events again: its creator or an administrator of its scope',
  },
  {
    route: `POST ${V}/webhooks/:webhookId/deliveries/:deliveryId/retry`,
    kind: 'owned',
    call: (w) => ({
      path: `${V}/webhooks/${w.ids.webhook}/deliveries/00000000-0000-4000-8000-000000000000/retry`,
    }),
    expect: { owner: 'hidden', orgAdmin: 'hidden', globalAdmin: 'hidden' },
    why: 'no delivery with that id: only authorization is compared (the member must not learn the webhook exists)',
  },

  // Agents (issue 42): /mcp takes an API key only, so every session is refused (test/agents/mcp.test.ts
  // covers the keys); what an agent proposed is reached by its key's owner, the document's owner and
  // the administrators of its organization.
  {
    route: 'POST /mcp',
    kind: 'self',
    call: () => ({ path: '/mcp', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }),
    expect: {
      stranger: 'forbidden',
      member: 'forbidden',
      orgAdmin: 'forbidden',
      globalAdmin: 'forbidden',
      owner: 'forbidden',
    },
    why: 'issue 42: /mcp is authenticated by API key; a session is 403 whoever holds it',
  },
  {
    route: 'GET /mcp',
    kind: 'public',
    call: () => ({ path: '/mcp' }),
    why: 'stateless Streamable HTTP: 405 for everyone, no stream is opened',
  },
  {
    route: 'DELETE /mcp',
    kind: 'public',
    call: () => ({ path: '/mcp' }),
    why: 'stateless Streamable HTTP: 405 for everyone, there is no session to end',
  },
  {
    route: `GET ${V}/agent-actions`,
    kind: 'self',
    call: () => ({ path: `${V}/agent-actions` }),
    why: 'each caller lists the actions they reach, none of the owner’s unless they administer the organization',
  },
  {
    route: `GET ${V}/agent-actions/:id`,
    kind: 'owned',
    call: async (w) => ({ path: `${V}/agent-actions/${await aPendingAction(w)}` }),
  },
  {
    route: `POST ${V}/agent-actions/:id/approve`,
    kind: 'owned',
    call: async (w) => ({ path: `${V}/agent-actions/${await aPendingAction(w)}/approve` }),
  },
  {
    route: `POST ${V}/agent-actions/:id/reject`,
    kind: 'owned',
    call: async (w) => ({ path: `${V}/agent-actions/${await aPendingAction(w)}/reject`, body: {} }),
  },
];

/**
 * A share of a new document of the owner's that the owner's agent proposed through /mcp (prepare_share):
 * the id of the pending action.
 */
async function aPendingAction(w: World): Promise<string> {
  const key = await w.server.api('POST', '/api/key', { token: w.tokens.owner!, body: { agent: true } });
  const documentId = await w.aDocument('Proposed');
  const answer = await fetch(`${w.server.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key.body.id as string}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'prepare_share',
        arguments: { id: documentId, data: [{ sharePurpose: 'view', shareTo: 'someone@example.org' }] },
      },
    }),
  });
  const json = (await answer.json()) as { result: { content: { text: string }[] } };
  return (JSON.parse(json.result.content[0]!.text) as { pendingActionId: string }).pendingActionId;
}

/**
 * Rights per document type (spec Documents rule 4: "`optionalData.folder` places the document in a
 * folder; the caller needs rights on both folder and document type"; issue 24, item 14): the routes
 * that name a document type, called with the owner-only `ownertype`, and the folder half of the rule.
 * These rows are checked beside ROWS, not counted in its one row per route.
 */
/** POST /documents of `documentType`, placed in `folder` when given. */
const aDocumentOfType = (documentType: string, folder?: string): Call => ({
  path: `${V}/documents`,
  body: { body: { documentTitle: 'Typed', documentType }, ...(folder ? { optionalData: { folder } } : {}) },
});

const TYPE_ROWS: Row[] = [
  {
    route: `POST ${V}/documents`,
    kind: 'typed',
    why: 'a document of a type usable by the owner alone',
    call: (w) => aDocumentOfType(w.ids.ownerType!),
  },
  {
    route: `POST ${V}/documents`,
    kind: 'typed',
    why: 'rights on both: an open type in the owner’s private folder needs rights on the folder too (400 naming optionalData.folder without)',
    call: (w) => aDocumentOfType(w.ids.definition!, w.ids.folder),
    expect: { member: 'fails', orgAdmin: 'ok' },
  },
  {
    route: `POST ${V}/documents`,
    kind: 'typed',
    why: 'neither: the type is refused first (403), the folder is never looked at',
    call: (w) => aDocumentOfType(w.ids.ownerType!, w.ids.folder),
  },
  {
    route: `POST ${V}/documents/bulk/create`,
    kind: 'typed',
    call: async (w, actor) => ({
      path: `${V}/documents/bulk/create`,
      body: {
        body: { documentType: w.ids.ownerType },
        bulkFiles: [{ content: await uploadFor(w, actor), documentTitle: 'Bulk' }],
      },
    }),
  },
  {
    route: `PUT ${V}/documents/:documentId`,
    kind: 'owned',
    why: 'changing a document to a type the caller may not use: its organization’s administrator may edit it, not retype it',
    call: async (w) => {
      const { id, version } = await fresh(w);
      return { path: `${V}/documents/${version}`, body: { id, body: { documentType: w.ids.ownerType } } };
    },
    expect: { orgAdmin: 'forbidden' },
  },
  {
    route: `POST ${V}/drafts`,
    kind: 'typed',
    call: (w) => ({
      path: `${V}/drafts`,
      body: { data: { documentTitle: 'D', documentType: w.ids.ownerType } },
    }),
  },
  {
    route: `POST ${V}/templates`,
    kind: 'typed',
    call: (w) => ({ path: `${V}/templates`, body: { data: { name: 'T', documentType: w.ids.ownerType } } }),
  },
  {
    route: `PUT ${V}/templates`,
    kind: 'owned',
    why: 'retyping a template of the owner’s: its organization’s administrator may edit it, not name a type they may not use',
    call: async (w) => {
      const made = await w.server.api('POST', '/templates', {
        token: w.tokens.owner,
        body: { data: { name: 'T' } },
      });
      return {
        path: `${V}/templates`,
        body: { id: made.body.id, data: { name: 'T', documentType: w.ids.ownerType } },
      };
    },
    expect: { orgAdmin: 'forbidden' },
  },
];

/** An upload of the caller's own (the owner's when the caller has no session), for rows that use a file. */
async function uploadFor(w: World, actor: Actor) {
  const token = ['anonymous', 'recipientLocked', 'recipientUnlocked'].includes(actor)
    ? w.tokens.owner
    : w.tokens[actor];
  return upload(w.server, token!, makePdf());
}

/**
 * Issue 24 item 11, spec Sharing: "view = read-only, edit = edit rights". The document routes once more,
 * for the users of the owner's organization a new document is shared with (`aSharedDocument`): for
 * `edit` (src/core/access/document-access.ts `canEdit`: its data, files, annotations and signatures)
 * and for `view` (reading only). Managing the document stays with its owner and administrators
 * (`canManage`): 403 to both, who see it. Each row names a route of ROWS; the member's, the stranger's
 * and the others' answers on such routes are the rows above.
 */
interface SharedRow {
  route: string;
  call: (w: World, token: string) => Promise<Call>;
  editor: Expect;
  viewer: Expect;
  why?: string;
  /** What the editor and viewer get when the document is not shared itself but sits in a shared folder. */
  inFolder?: { editor: Expect; viewer: Expect; why: string };
}

/** The caller's own upload (their signature image, an image or a PDF for the document). */
const uploadAs = (w: World, token: string, what: 'signature' | 'png' | 'pdf') =>
  what === 'signature'
    ? upload(w.server, token, PNG_1PX, { path: '/files/signature', name: 's.png', type: 'image/png' })
    : what === 'png'
      ? upload(w.server, token, PNG_1PX, { name: 'i.png', type: 'image/png' })
      : upload(w.server, token, makePdf());
const sharedSign = async (w: World, token: string): Promise<Call> => {
  const { id, version } = await w.aSharedDocument();
  return {
    path: `${V}/documents/sign/${version}`,
    body: { id, signatures: [SIGNATURE(await uploadAs(w, token, 'signature'))] },
  };
};
const shownFile = async (w: World, id: string) =>
  (await w.server.api('GET', `/documents/${id}`, { token: w.tokens.owner })).body.results[0];

const SHARED_ROWS: SharedRow[] = [
  {
    route: `GET ${V}/documents/:documentId`,
    call: async (w) => ({ path: `${V}/documents/${(await w.aSharedDocument()).id}` }),
    editor: 'ok',
    viewer: 'ok',
  },
  {
    route: `GET ${V}/share/document`,
    call: async (w) => ({ path: `${V}/share/document`, query: { id: (await w.aSharedDocument()).id } }),
    editor: 'ok',
    viewer: 'ok',
    why: 'internal recipients read their share with GET /share/document?id=',
    inFolder: {
      editor: 'hidden',
      viewer: 'hidden',
      why: 'a folder share gives access, not a share of each document to act on: GET /documents/{id} reads it',
    },
  },
  {
    route: `GET ${V}/share/document/preview`,
    call: async (w) => ({
      path: `${V}/share/document/preview`,
      query: { id: (await w.aSharedDocument()).id },
    }),
    editor: 'ok',
    viewer: 'ok',
    why: 'the first page of GET /share/document?id=, to the same internal recipients',
    inFolder: {
      editor: 'hidden',
      viewer: 'hidden',
      why: 'as GET /share/document: no share of the document itself',
    },
  },
  {
    route: `GET ${V}/files/loadFile/hash/:hash`,
    call: async (w) => ({
      path: `${V}/files/loadFile/hash/${(await shownFile(w, (await w.aSharedDocument()).id)).pdfFile.content}`,
    }),
    editor: 'ok',
    viewer: 'ok',
  },
  {
    route: `GET ${V}/attachments/:id/zip`,
    call: async (w) => ({ path: `${V}/attachments/${(await w.aSharedDocument()).id}/zip` }),
    editor: 'ok',
    viewer: 'ok',
  },
  {
    route: `GET ${V}/revisions/document/:id/:revision`,
    call: async (w) => ({ path: `${V}/revisions/document/${(await w.aSharedDocument()).id}/1` }),
    editor: 'ok',
    viewer: 'ok',
  },
  {
    route: `GET ${V}/documents/:documentId/verify`,
    call: async (w) => ({ path: `${V}/documents/${(await w.aSharedDocument()).id}/verify` }),
    editor: 'ok',
    viewer: 'ok',
  },
  {
    route: `PUT ${V}/documents/:documentId`,
    call: async (w) => {
      const { id, version } = await w.aSharedDocument();
      return {
        path: `${V}/documents/${version}`,
        body: { id, body: { documentTitle: 'Changed by editor' } },
      };
    },
    editor: 'ok',
    viewer: 'forbidden',
  },
  {
    route: `PUT ${V}/documents/edit/:version`,
    call: async (w) => {
      const { id, version } = await w.aSharedDocument();
      return { path: `${V}/documents/edit/${version}`, body: { id, documentTitle: 'Edited by editor' } };
    },
    editor: 'ok',
    viewer: 'forbidden',
  },
  {
    route: `PUT ${V}/documents/:documentId/merge`,
    call: async (w, token) => {
      const { id, version } = await w.aSharedDocument();
      return {
        path: `${V}/documents/${id}/merge`,
        body: { version, files: [await uploadAs(w, token, 'pdf')] },
      };
    },
    editor: 'ok',
    viewer: 'forbidden',
  },
  {
    route: `PUT ${V}/documents/annotate/:version`,
    call: async (w, token) => {
      const { id, version } = await w.aSharedDocument();
      return {
        path: `${V}/documents/annotate/${version}`,
        body: {
          id,
          images: [{ blob: await uploadAs(w, token, 'png'), pages: [1], position: SIGNATURE().position }],
        },
      };
    },
    editor: 'ok',
    viewer: 'forbidden',
  },
  { route: `PUT ${V}/documents/sign/:version`, call: sharedSign, editor: 'ok', viewer: 'forbidden' },
  { route: `POST ${V}/documents/sign/:version`, call: sharedSign, editor: 'ok', viewer: 'forbidden' },
  {
    route: `PUT ${V}/documents/seal/:version`,
    call: async (w) => {
      const { id, version } = await w.aSharedDocument();
      return { path: `${V}/documents/seal/${version}`, body: { id, certificate: true } };
    },
    editor: 'forbidden',
    viewer: 'forbidden',
    why: 'the organisation key seals for who manages the document',
  },
  {
    route: `DELETE ${V}/documents`,
    call: async (w) => ({
      path: `${V}/documents`,
      body: { documents: [{ id: (await w.aSharedDocument()).id }] },
    }),
    editor: 'listed',
    viewer: 'listed',
    why: 'spec Errors 4: a document the caller may not delete is listed',
  },
  {
    route: `PUT ${V}/documents/owner`,
    call: async (w) => ({
      path: `${V}/documents/owner`,
      body: { id: (await w.aSharedDocument()).id, owner: 'heir' },
    }),
    editor: 'forbidden',
    viewer: 'forbidden',
  },
  {
    route: `POST ${V}/share`,
    call: async (w) => ({
      path: `${V}/share`,
      body: { id: (await w.aSharedDocument()).id, data: [{ sharePurpose: 'view', shareTo: 'member' }] },
    }),
    editor: 'forbidden',
    viewer: 'forbidden',
  },
  {
    route: `POST ${V}/share/cancel`,
    call: async (w) => ({ path: `${V}/share/cancel`, body: { id: (await w.aSharedDocument()).id } }),
    editor: 'forbidden',
    viewer: 'forbidden',
  },
  {
    route: `GET ${V}/documents/:documentId/audit`,
    call: async (w) => ({ path: `${V}/documents/${(await w.aSharedDocument()).id}/audit` }),
    editor: 'forbidden',
    viewer: 'forbidden',
  },
];

/** A new document of the owner's shared to new protected recipients, whose tokens the row uses. */
async function protectedShare(w: World) {
  const id = await w.aDocument();
  const share = await w.aProtectedShare(id);
  return { id, as: { recipientLocked: share.locked, recipientUnlocked: share.unlocked } };
}

/** `METHOD /path` with every parameter written `:`, so table and app compare whatever the names. */
function shape(route: string): string {
  return route.replace(/\/:[^/]+/g, '/:').replace(/\{[^}]+\}/g, ':');
}

/** The routes of the running app, from Fastify's own route tree (HEAD twins of GET left out). */
function appRoutes(w: World): string[] {
  const tree = w.server.app.server.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    // A wildcard prints without its slash (`*` under `/api/v1/docs` is `/api/v1/docs/*`).
    stack.push(match[2] === '*' ? '/*' : match[2]!);
    const path = stack.join('').replace(/\|:[^/|]+/g, '');
    for (const method of (match[3] ?? '').split(',').map((m) => m.trim()))
      if (method && method !== 'HEAD') out.push(`${method} ${path}`);
  }
  return out;
}

describe('access matrix: every route × every kind of caller', () => {
  let w: World;
  before(async () => {
    w = await buildWorld();
  });
  after(async () => {
    await w?.close();
  });

  it('every route of the app has exactly one row, and every row names a route of the app', () => {
    const app = new Set(appRoutes(w).map(shape));
    const rows = ROWS.map((r) => shape(r.route));
    const duplicates = rows.filter((r, i) => rows.indexOf(r) !== i);
    assert.deepEqual(duplicates, [], 'rows named twice');
    assert.deepEqual([...app].filter((r) => !rows.includes(r)).sort(), [], 'routes without a row');
    assert.deepEqual(rows.filter((r) => !app.has(r)).sort(), [], 'rows without a route');
  });

  const results: string[] = [];
  let requests = 0;
  after(() => {
    console.log(
      `access matrix: ${ROWS.length} routes and ${TYPE_ROWS.length} document-type rows × ${ACTORS.length} callers, ${requests} requests`,
    );
    if (process.env.MATRIX_PRINT) console.log(results.join('\n'));
  });

  /** Calls the row's route as every actor and lists the answers that are not the expected ones. */
  async function wrongAnswers(row: Row): Promise<string[]> {
    const method = row.route.split(' ')[0]!;
    const wrong: string[] = [];
    const seen: string[] = [];
    for (const actor of ACTORS) {
      const expected = { ...DEFAULTS[row.kind], ...row.expect }[actor];
      // Sessions GET /logout ends are made for that row alone.
      const call = await row.call(w, actor);
      const token =
        call.as?.[actor] ?? (row.route.endsWith('/logout') ? await sessionFor(w, actor) : w.tokens[actor]);
      const response = call.manual
        ? await manualGet(w, call.path, token)
        : await w.server.api(method, `/${call.path}`, {
            token,
            body: call.body,
            query: call.query,
            form: call.form,
          });
      requests++;
      seen.push(`${actor}=${response.status}`);
      const headers = [...response.headers.values()].join('\n');
      const problem =
        token && headers.includes(token)
          ? 'a header repeats the token'
          : (securityHeaderProblem((name) => response.headers.get(name)) ??
            judge(expected, actor, response.status, response.body, response.text, w, call));
      if (problem)
        wrong.push(
          `${actor}: expected ${expected} (${problem}), got ${response.status} ${response.text.slice(0, 160)}`,
        );
    }
    results.push(`${row.route}: ${seen.join(' ')}`);
    return wrong;
  }

  for (const row of ROWS)
    it(`${row.route} (${row.kind}${row.why ? `: ${row.why}` : ''})`, async () => {
      assert.deepEqual(await wrongAnswers(row), []);
    });

  for (const row of TYPE_ROWS)
    it(`spec Documents rule 4, "the caller needs rights on both folder and document type": ${row.route} (${row.kind}${row.why ? `: ${row.why}` : ''})`, async () => {
      assert.deepEqual(await wrongAnswers(row), []);
    });

  it('every row of the shared document names a route of ROWS', () => {
    const rows = new Set(ROWS.map((r) => shape(r.route)));
    assert.deepEqual(
      SHARED_ROWS.map((r) => shape(r.route)).filter((r) => !rows.has(r)),
      [],
    );
  });

  // spec Folder, "Access is inherited" (issue 41 item 10): a document in a folder nested in one shared
  // for edit and for view answers those users as if the document itself were shared with them.
  for (const [row, via] of SHARED_ROWS.flatMap(
    (r) =>
      [
        [r, 'document'],
        [r, 'folder'],
      ] as const,
  )) {
    const method = row.route.split(' ')[0]!;
    const shared = (): World =>
      via === 'document' ? w : { ...w, aSharedDocument: () => w.aDocumentInSharedFolder() };
    const expected = via === 'folder' && row.inFolder ? row.inFolder : row;
    it(`${row.route} on a document ${via === 'document' ? 'shared' : 'in a folder shared'} for edit and for view (issue 24 item 11${via === 'folder' ? ', issue 41 item 10' : ''}${expected.why ? `: ${expected.why}` : ''})`, async () => {
      const wrong: string[] = [];
      for (const who of COLLABORATORS) {
        const token = w.collaborators[who];
        const call = await row.call(shared(), token);
        const response = await w.server.api(method, `/${call.path}`, {
          token,
          body: call.body,
          query: call.query,
        });
        requests++;
        const problem =
          securityHeaderProblem((name) => response.headers.get(name)) ??
          judge(expected[who], who, response.status, response.body, response.text, w, call);
        if (problem)
          wrong.push(
            `${who}: expected ${expected[who]} (${problem}), got ${response.status} ${response.text.slice(0, 160)}`,
          );
      }
      assert.deepEqual(wrong, []);
    });
  }
});

/** GET without following redirects, the token in the query as the API helper sends it. */
async function manualGet(w: World, path: string, token: string | undefined) {
  const url = new URL(path, w.server.url);
  if (token) url.searchParams.set('token', token);
  const response = await fetch(url, { redirect: 'manual' });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: undefined, text };
}

/** A session of its own for `actor`'s kind (its login name), for rows that end or lock the session. */
async function sessionFor(w: World, actor: Actor): Promise<string | undefined> {
  const names: Partial<Record<Actor, [string, string?]>> = {
    stranger: ['stranger', 'other'],
    member: ['member'],
    orgAdmin: ['orgadmin'],
    globalAdmin: ['globaladmin'],
    owner: ['owner'],
  };
  const who = names[actor];
  if (!who) return w.tokens[actor];
  return w.server.login(who[0], 'user-password-1', who[1] ? { tenant: who[1] } : {});
}

/** What is wrong with an answer to `actor` whose expectation is `expected`; undefined when right. */
function judge(
  expected: Expect,
  actor: Actor | Collaborator,
  status: number,
  // Error bodies and the delete answer are read by field.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any,
  text: string,
  w: World,
  call: Call,
): string | undefined {
  // An answer may name what the request itself named ("No such template: <id>"); nothing else.
  const asked = `${call.path} ${JSON.stringify(call.body ?? {})}`;
  // The signer's page answers 503 UNAVAILABLE where it was not built (npm run build): still public.
  if (status >= 500 && !(expected === 'public' && status === 503)) return 'server error';
  const code: unknown = body?.code;
  // Administrators of the organization see its documents (src/core/access/document-access.ts), and the
  // users it is shared with see a shared one; no one else does.
  const sees = ['owner', 'orgAdmin', 'globalAdmin', ...COLLABORATORS];
  if (!sees.includes(actor) && !['ok', 'public'].includes(expected))
    for (const secret of w.secrets)
      if (text.includes(secret) && !asked.includes(secret)) return `shows the owner's ${secret}`;
  switch (expected) {
    case 'ok':
      return status >= 200 && status < 300 ? undefined : 'not 2xx';
    case 'public':
      return status === 401 || status === 403 ? 'asks for credentials' : undefined;
    case 'own':
      return status === 401 || (status === 403 && code === 'MFA_REQUIRED')
        ? 'refused the session'
        : undefined;
    case 'hidden':
      return status === 404 || (actor === 'stranger' && status === 401) ? undefined : 'not hidden';
    case 'forbidden':
      return status === 403 && code === 'FORBIDDEN' ? undefined : 'not 403 FORBIDDEN';
    case 'fails':
      return status >= 400 && status < 500 ? undefined : 'not 4xx';
    case 'listed':
      return status === 200 && body?.errors === true ? undefined : 'not refused in the answer';
    case 'unauth':
      return status === 401 ? undefined : 'not 401';
    case 'mfa':
      return status === 403 && code === 'MFA_REQUIRED' ? undefined : 'not 403 MFA_REQUIRED';
  }
}

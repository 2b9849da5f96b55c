import assert from 'node:assert/strict';
import { makePdf } from './pdf.js';
import { createUser, upload, USER_PASSWORD, type ApiResponse, type TestServer } from './server.js';
import { shareTokenOf, type TestSmtp } from './smtp.js';

/**
 * The scenarios tests start from, built through the real API as a client would: a user, a document,
 * a shared document and a signed document. Each step that must work throws when it does not, so a
 * test's own assertions are about its rule, not its setup.
 */

type NewUser = Record<string, unknown> & { name: string };

/** The people many scenarios cast: the owner of the documents, and two colleagues who sign them. */
export const OWNER = { name: 'owner', email: 'owner@example.test', displayName: 'Olivia Owner' };
export const IVY = { name: 'ivy', email: 'ivy@example.test', displayName: 'Ivy Signer' };
export const JON = { name: 'jon', email: 'jon@example.test', displayName: 'Jon Signer' };

export interface AUser {
  id: string;
  name: string;
  /** A session of the user's (POST /login). */
  token: string;
  /** An API key of the user's (POST /api/key), with `apiKey: true`. */
  apiKey?: string;
}

/** A user the administrator makes (POST /users), signed in; with `apiKey: true`, with an API key too. */
export async function aUser(
  server: TestServer,
  user: NewUser,
  options: { apiKey?: boolean } = {},
): Promise<AUser> {
  const id = await createUser(server, user);
  const token = await server.login(user.name, (user.password as string | undefined) ?? USER_PASSWORD);
  if (!options.apiKey) return { id, name: user.name, token };
  const key = succeeded(await server.api('POST', '/api/key', { token, body: {} }), 'POST /api/key');
  return { id, name: user.name, token, apiKey: key.body.id as string };
}

/** Users the administrator makes (POST /users), one after the other, not signed in: their ids. */
export async function someUsers(server: TestServer, users: NewUser[]): Promise<string[]> {
  const ids: string[] = [];
  for (const user of users) ids.push(await createUser(server, user));
  return ids;
}

export interface DocumentSpec {
  title?: string;
  /**
   * The main file (POST /files/saveFile): these bytes, or the PDF makePdf writes with these options;
   * one page when not given, none with `null`.
   */
  pdf?: Buffer | Parameters<typeof makePdf>[0] | null;
  /** More of the document, beside its title and main file (POST /documents' `body`). */
  body?: Record<string, unknown>;
  /** More of the call, beside `body` (`optionalData`, …). */
  call?: Record<string, unknown>;
}

/** A document of `token`'s owner (POST /documents), with a main file uploaded first: its id. */
export async function aDocument(server: TestServer, token: string, spec: DocumentSpec = {}): Promise<string> {
  const pdf = spec.pdf === null ? undefined : Buffer.isBuffer(spec.pdf) ? spec.pdf : makePdf(spec.pdf);
  const content = pdf ? await upload(server, token, pdf) : undefined;
  const created = await server.api('POST', '/documents', {
    token,
    body: {
      body: {
        documentTitle: spec.title ?? 'Agreement',
        ...(content ? { pdfFile: { content } } : {}),
        ...spec.body,
      },
      ...spec.call,
    },
  });
  return succeeded(created, 'POST /documents').body.results[0].documentId as string;
}

/** GET /files/loadFile/hash/:id as `token`'s user: the bytes. */
export async function download(server: TestServer, token: string, fileId: string): Promise<Buffer> {
  const response = await fetch(`${server.url}/api/v1/files/loadFile/hash/${fileId}?token=${token}`);
  assert.equal(response.status, 200, `download ${fileId}`);
  return Buffer.from(await response.arrayBuffer());
}

/** The document's main file as it is now, as `token`'s user reads it. */
export async function mainFileOf(server: TestServer, token: string, id: string): Promise<Buffer> {
  return download(server, token, (await readDocument(server, token, id)).pdfFile.content as string);
}

/** The document as `token` reads it (GET /documents/:id). */
// Tests read arbitrary fields of the document.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function readDocument(server: TestServer, token: string, id: string): Promise<any> {
  return (await server.api('GET', `/documents/${id}`, { token })).body.results[0];
}

export interface ShareSpec extends DocumentSpec {
  /** The recipients (POST /share's `data`); an address or user name alone is one signer. */
  to: string | Record<string, unknown>[];
  /** More of POST /share's body (sequential, signatureFields, signEntities, …). */
  share?: Record<string, unknown>;
}

export interface SharedDocument {
  id: string;
  /** POST /share's answer: the Share objects. */
  // Tests read arbitrary fields of the shares.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  shares: any[];
}

/** A document of `token`'s owner shared with recipients (POST /share). */
export async function aSharedDocument(
  server: TestServer,
  token: string,
  spec: ShareSpec,
): Promise<SharedDocument> {
  const id = await aDocument(server, token, spec);
  return { id, shares: await shareDocument(server, token, id, spec) };
}

/** POST /share of document `id`, which must succeed: the Share objects. */
export async function shareDocument(
  server: TestServer,
  token: string,
  id: string,
  spec: Pick<ShareSpec, 'to' | 'share'>,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any[]> {
  const data = typeof spec.to === 'string' ? [{ sharePurpose: 'sign', shareTo: spec.to }] : spec.to;
  const shared = await server.api('POST', '/share', { token, body: { id, data, ...spec.share } });
  return succeeded(shared, 'POST /share').body;
}

/**
 * A document shared with one recipient by e-mail address, and that recipient's link token, read from
 * the invitation the server mailed (the first mail to `email` matching `mail`).
 */
export async function anExternalShare(
  server: TestServer & { smtp: TestSmtp },
  token: string,
  spec: DocumentSpec & {
    email: string;
    /** More of the recipient (password, phone, allowedOAuths, rights, …). */
    recipient?: Record<string, unknown>;
    share?: Record<string, unknown>;
    mail?: RegExp;
  },
): Promise<SharedDocument & { link: string }> {
  const to = [{ sharePurpose: 'sign', shareTo: spec.email, ...spec.recipient }];
  const shared = await aSharedDocument(server, token, { ...spec, to });
  return { ...shared, link: await linkOf(server.smtp, spec.email, spec.mail) };
}

/** The share link token of the first invitation to `email` matching `mail`. */
export async function linkOf(smtp: TestSmtp, email: string, mail = /\/s\/shr_/): Promise<string> {
  return shareTokenOf(await smtp.waitFor(email, mail));
}

/** A document of `token`'s owner, signed by them (PUT /documents/sign) with `signatures`. */
export async function aSignedDocument(
  server: TestServer,
  token: string,
  spec: DocumentSpec & { signatures: Record<string, unknown>[] },
): Promise<string> {
  const id = await aDocument(server, token, spec);
  succeeded(await signDocument(server, token, id, spec.signatures), 'PUT /documents/sign');
  return id;
}

/**
 * PUT /documents/sign as `token`'s user (the owner or a recipient) at the document's current version,
 * read by `readAs` (the signer unless told: a recipient's read of a shared document is an event).
 */
export async function signDocument(
  server: TestServer,
  token: string,
  id: string,
  signatures: Record<string, unknown>[],
  readAs = token,
): Promise<ApiResponse> {
  const version = (await readDocument(server, readAs, id))._version as number;
  return server.api('PUT', `/documents/sign/${version}`, { token, body: { id, signatures } });
}

/** PUT /share/document/sign at the version the link shows, as the link's recipient. */
export async function signByLink(
  server: TestServer,
  link: string,
  id: string,
  signatures: Record<string, unknown>[],
): Promise<ApiResponse> {
  const shown = await server.api('GET', '/share/document', { token: link });
  return server.api('PUT', `/share/document/sign/${shown.body.results[0]._version}`, {
    token: link,
    body: { id, signatures },
  });
}

function succeeded(response: ApiResponse, call: string): ApiResponse {
  if (response.status !== 200) throw new Error(`${call} failed: ${response.status} ${response.text}`);
  return response;
}

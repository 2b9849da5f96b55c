import assert from 'node:assert/strict';
import type { Workspace } from '../pdf/oracles.js';
import { makePdf } from './pdf.js';
import { mustSucceed, upload, type ApiResponse, type TestServer } from './server.js';

/**
 * Scenario builders for documents, through the real API as a client would: a document with its main
 * file, a signed document; and what tests read of them.
 */

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
  return mustSucceed(created, 'POST /documents').body.results[0].documentId as string;
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

/**
 * The document's main file as it is now, written to `space` for the oracles (named after the document,
 * its version and the file, so each revision has its own): its path.
 */
export async function writeMainFile(
  server: TestServer,
  token: string,
  id: string,
  space: Workspace,
): Promise<string> {
  const doc = await readDocument(server, token, id);
  const bytes = await download(server, token, doc.pdfFile.content as string);
  return space.write(`${id}-${doc._version}-${doc.pdfFile.content}.pdf`, bytes);
}

/** What the file is used by (`document:<id>`, …; null while unused: spec Files, usage rules). */
export async function fileUsedBy(server: TestServer, fileId: string): Promise<string | null> {
  const file = await server.app.deps.db
    .selectFrom('files')
    .select('used_by')
    .where('id', '=', fileId)
    .executeTakeFirstOrThrow();
  return file.used_by;
}

/** How many file records are named `name` (a refused or failed save writes none). */
export async function filesNamed(server: TestServer, name: string): Promise<number> {
  const rows = await server.app.deps.db.selectFrom('files').select('id').where('name', '=', name).execute();
  return rows.length;
}

/** The document as `token` reads it (GET /documents/:id). */
// Tests read arbitrary fields of the document.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function readDocument(server: TestServer, token: string, id: string): Promise<any> {
  return (await server.api('GET', `/documents/${id}`, { token })).body.results[0];
}

/** The names of the document's events (the outbox webhooks are sent from), in the order they occurred. */
export async function eventsOf(server: TestServer, documentId: string): Promise<string[]> {
  return (
    await server.app.deps.db
      .selectFrom('events')
      .select('event')
      .where('document_id', '=', documentId)
      .orderBy('occurred_at')
      .execute()
  ).map((e) => e.event);
}

/** A document of `token`'s owner, signed by them (PUT /documents/sign) with `signatures`. */
export async function aSignedDocument(
  server: TestServer,
  token: string,
  spec: DocumentSpec & { signatures: Record<string, unknown>[] },
): Promise<string> {
  const id = await aDocument(server, token, spec);
  mustSucceed(await signDocument(server, token, id, spec.signatures), 'PUT /documents/sign');
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

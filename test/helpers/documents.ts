import assert from 'node:assert/strict';
import { makePdf } from './pdf.js';
import { upload, type TestServer } from './server.js';

/**
 * A new document of the user of `token`: a PDF of `pages` pages uploaded with POST /files/saveFile
 * and made a document with POST /documents. Its id.
 */
export async function aDocument(
  server: TestServer,
  token: string,
  title: string,
  options: { pages?: number } = {},
): Promise<string> {
  const pdf = await upload(server, token, makePdf({ pages: options.pages ?? 2 }));
  const created = await server.api('POST', '/documents', {
    token,
    body: { body: { documentTitle: title, pdfFile: { content: pdf } } },
  });
  assert.equal(created.status, 200, created.text);
  return created.body.results[0].documentId as string;
}

/** POST /share of document `id` to the recipients in `data`, as the user of `token`: the share ids. */
export async function shareDocument(
  server: TestServer,
  token: string,
  id: string,
  data: Record<string, unknown>[],
): Promise<string[]> {
  const shared = await server.api('POST', '/share', { token, body: { id, data } });
  assert.equal(shared.status, 200, shared.text);
  return (shared.body as { shareId: string }[]).map((s) => s.shareId);
}

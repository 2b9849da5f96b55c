import assert from 'node:assert/strict';
import { download } from '../helpers/documents.js';
import { upload, type ApiResponse, type TestServer } from '../helpers/server.js';
import type { Workspace } from '../pdf/oracles.js';

/** Where the signer's visible signature goes on page 1 (page fractions from the top-left corner). */
export const SIGNATURE_BOX = { percentX: 0.45, percentY: 0.55, percentWidth: 0.35, percentHeight: 0.1 };

export interface SignedThroughApi {
  documentId: string;
  /** The main file as uploaded (after any repair at upload) and as signed and sealed. */
  uploaded: { id: string; path: string };
  signed: { id: string; path: string; bytes: Buffer };
}

/**
 * The whole path a PDF takes in production: POST /files/saveFile (unless `pdf` is the id of a file
 * already uploaded), POST /documents, PUT
 * /documents/sign with a visible signature (the signer's name in a frame at `SIGNATURE_BOX`), PUT
 * /documents/seal with the organisation key; each step must answer 200. The files are written to
 * `space` for the oracles.
 */
export async function signAndSealThroughApi(
  server: TestServer,
  token: string,
  space: Workspace,
  pdf: Buffer | string,
  name: string,
): Promise<SignedThroughApi> {
  const fileId = typeof pdf === 'string' ? pdf : await upload(server, token, pdf, { name: `${name}.pdf` });
  const created = await createDocument(server, token, fileId, name);
  assert.equal(created.status, 200, created.text);
  const documentId = created.body.results[0].documentId as string;
  const signed = await server.api('PUT', '/documents/sign/1', {
    token,
    body: {
      id: documentId,
      signatures: [{ type: 'signature', pages: [1], position: SIGNATURE_BOX, decorationType: 'frame' }],
    },
  });
  assert.equal(signed.status, 200, signed.text);
  const sealed = await server.api('PUT', '/documents/seal/2', {
    token,
    body: { id: documentId, certificate: true },
  });
  assert.equal(sealed.status, 200, sealed.text);
  const doc = (await server.api('GET', `/documents/${documentId}`, { token })).body.results[0];
  const bytes = await download(server, token, doc.pdfFile.content as string);
  return {
    documentId,
    uploaded: {
      id: fileId,
      path: await space.write(`${name}-uploaded.pdf`, await download(server, token, fileId)),
    },
    signed: {
      id: doc.pdfFile.content as string,
      path: await space.write(`${name}-signed.pdf`, bytes),
      bytes,
    },
  };
}

/** POST /documents with `fileId` as the main file. */
export function createDocument(
  server: TestServer,
  token: string,
  fileId: string,
  title: string,
): Promise<ApiResponse> {
  return server.api('POST', '/documents', {
    token,
    body: { body: { documentTitle: title, pdfFile: { content: fileId } } },
  });
}

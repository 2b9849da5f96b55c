/**
 * The documents the read cases of bench/api read (GET /documents/:id, POST /search), made through the
 * API before the run as an integration would make them: an ordinary user (role `user`, not an
 * administrator, so visibility is really checked) with a session and API keys, a private folder, and
 * documents in it, each with a one-page PDF, custom fields and a pending sign share to a colleague
 * (so `folder`, `pdfFile`, `customFields` and `waitingFor` are all filled in).
 */
import { makePdf } from '../../test/helpers/pdf.js';
import { logIn, makeApiKeys } from './server.js';

const INTEGRATOR = { name: 'bench-integrator@example.com', password: 'bench-integrator-0123456789' };
const SIGNER = { name: 'bench-signer@example.com', password: 'bench-signer-0123456789' };
/** Documents per POST /documents/bulk/create (its limit is 1,000; 100 keeps each request short). */
const BULK = 100;

/** One request of a read case and the very answer it must get (status 200, these bytes). */
export interface ReadRequest {
  path: string;
  body?: string;
  answer: string;
}

export interface ReadFixture {
  /** GET /api/v1/documents/:id, document i with token i (both taken round). */
  documents: ReadRequest[];
  /** POST /api/v1/search `{}` (the first page of 20, newest first), one per token. */
  search: ReadRequest[];
}

async function call(baseUrl: string, method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${baseUrl}/api/v1${path}${path.includes('?') ? '&' : '?'}token=${token}`, {
    method,
    ...(body !== undefined
      ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
      : {}),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return text;
}

async function uploadPdf(baseUrl: string, token: string, n: number): Promise<string> {
  const form = new FormData();
  const pdf = makePdf({ lines: [`Bench contract ${n}`] });
  form.append('file', new Blob([pdf], { type: 'application/pdf' }), `contract-${n}.pdf`);
  const response = await fetch(`${baseUrl}/api/v1/files/saveFile?token=${token}`, {
    method: 'POST',
    body: form,
  });
  if (!response.ok)
    throw new Error(`POST /files/saveFile answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { file: { id: string } }).file.id;
}

/**
 * Makes the integrator, `tokens` tokens of theirs and `count` documents; then reads each request's
 * answer once, so that the load can check every answer against it.
 */
export async function prepareReads(
  baseUrl: string,
  adminToken: string,
  options: { documents: number; tokens: number },
): Promise<ReadFixture> {
  for (const user of [INTEGRATOR, SIGNER]) {
    await call(baseUrl, 'POST', '/users', adminToken, { ...user, role: 'user' });
  }
  const session = await logIn(baseUrl, INTEGRATOR);
  const tokens = [session, ...(await makeApiKeys(baseUrl, session, options.tokens - 1))];
  const folder = JSON.parse(
    await call(baseUrl, 'POST', '/folders', session, { name: 'Bench contracts', isShared: false }),
  ) as { id: string };
  const ids: string[] = [];
  for (let at = 0; at < options.documents; at += BULK) {
    const files: { content: string; documentTitle: string }[] = [];
    for (let n = at; n < Math.min(at + BULK, options.documents); n++) {
      files.push({ content: await uploadPdf(baseUrl, session, n), documentTitle: `Bench contract ${n}` });
    }
    const created = JSON.parse(
      await call(baseUrl, 'POST', '/documents/bulk/create', session, {
        body: {
          customFields: [
            { key: 'customer', type: 'string', value: 'ACME Corporation' },
            { key: 'amount', type: 'number', value: 1250 },
          ],
        },
        bulkFiles: files,
        optionalData: { folder: folder.id },
      }),
    ) as { results: { documentId: string }[] };
    ids.push(...created.results.map((r) => r.documentId));
  }
  for (const id of ids) {
    await call(baseUrl, 'POST', '/share', session, {
      id,
      data: [{ sharePurpose: 'sign', shareTo: SIGNER.name }],
    });
  }
  const documents: ReadRequest[] = [];
  for (const [n, id] of ids.entries()) {
    const token = tokens[n % tokens.length]!;
    const path = `/api/v1/documents/${id}?token=${encodeURIComponent(token)}`;
    documents.push({ path, answer: await call(baseUrl, 'GET', `/documents/${id}`, token) });
  }
  const search: ReadRequest[] = [];
  for (const token of tokens) {
    const path = `/api/v1/search?token=${encodeURIComponent(token)}`;
    search.push({ path, body: '{}', answer: await call(baseUrl, 'POST', '/search', token, {}) });
  }
  const page = JSON.parse(search[0]!.answer) as { results: unknown[] };
  if (page.results.length !== Math.min(20, options.documents))
    throw new Error(`POST /search answered ${page.results.length} results, not a page of 20`);
  return { documents, search };
}

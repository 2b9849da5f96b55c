import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../base/clock.js';
import type { Config } from '../base/config.js';
import type { FileRecord, FileStore } from '../store/files/file-store.js';
import { errorBody } from './error-handler.js';
import { issueFileTicket } from './file-tickets.js';

/**
 * What a route answers once a change whose result the API does not show is done (spec: `{status:
 * "SUCCESS"}`); a failure of `done` is the answer instead.
 *
 * ```ts
 * async (request) => answerSuccess(deleteStamp(deps, actorOf(request), request.params.id))
 * ```
 */
export async function answerSuccess(done: Promise<unknown>): Promise<{ status: 'SUCCESS' }> {
  await done;
  return { status: 'SUCCESS' };
}

/**
 * The headers every answer carrying user-supplied bytes has (DESIGN, "Files answered to a browser"):
 * the browser may not guess another type, and whatever it renders runs in a sandbox with no script,
 * no origin and nothing to load, so an uploaded page or SVG can never act on our origin.
 */
export const USER_BYTES_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "sandbox; default-src 'none'",
} as const;

/** How many leading bytes decide a file's type: `%PDF-` may follow up to 1 KiB of junk (ISO 32000-2, 7.5.2). */
export const TYPE_SNIFF_BYTES = 1024;

/** Every type typeOfBytes answers: what a stored file's download may be. */
export const STORED_FILE_TYPES = [
  'application/pdf',
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/zip',
  'application/octet-stream',
] as const;

/**
 * The type a browser is told, decided from the file's own leading bytes, never from what its uploader
 * declared: the formats Signery handles, and `application/octet-stream` for anything else (text,
 * HTML, SVG and scripts included), which no browser renders.
 */
export function typeOfBytes(head: Uint8Array): (typeof STORED_FILE_TYPES)[number] {
  const starts = (...magic: number[]) => magic.every((byte, i) => head[i] === byte);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (starts(0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (starts(0x47, 0x49, 0x46, 0x38)) return 'image/gif';
  if (starts(0x52, 0x49, 0x46, 0x46) && Buffer.from(head.subarray(8, 12)).toString('latin1') === 'WEBP') {
    return 'image/webp';
  }
  if (starts(0x50, 0x4b, 0x03, 0x04)) return 'application/zip';
  if (Buffer.from(head.subarray(0, TYPE_SNIFF_BYTES)).includes('%PDF-')) return 'application/pdf';
  return 'application/octet-stream';
}

/**
 * `attachment` (saved), with the file's name in UTF-8; `inline` only for a PDF, which the signer
 * page displays (still under USER_BYTES_HEADERS' sandbox).
 */
export function contentDisposition(
  disposition: 'inline' | 'attachment',
  name: string,
  type?: string,
): string {
  const shown = disposition === 'inline' && (type === undefined || type === 'application/pdf');
  return `${shown ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** The leading bytes of a stored file, for typeOfBytes. */
export async function headOf(files: FileStore, file: FileRecord): Promise<Buffer> {
  const size = Number(file.size);
  if (size === 0) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  for await (const chunk of await files.open(file, { start: 0, end: Math.min(size, TYPE_SNIFF_BYTES) - 1 })) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** What answering a stored file needs: its bytes, and where downloads are served (FILES_PUBLIC_URL). */
export interface FileAnswerDeps {
  files: FileStore;
  clock: Clock;
  config: Pick<Config, 'filesPublicUrl'>;
}

/**
 * The one place a stored user file is answered (DESIGN, "Files answered to a browser"). With
 * FILES_PUBLIC_URL set, a request to the API's origin is answered 303 to a short-lived ticket on that
 * origin (file-tickets.ts), where routes/file-origin.ts answers the bytes with this function. Else
 * (or there) the bytes: the type from the bytes, nosniff, the sandbox CSP, the disposition (`inline`
 * is honoured for PDFs only), the digest as ETag and one `Range: bytes=a-b` answered 206.
 */
export async function sendStoredFile(
  deps: FileAnswerDeps,
  reply: FastifyReply,
  file: FileRecord,
  disposition: 'inline' | 'attachment',
): Promise<FastifyReply> {
  const filesOrigin = deps.config.filesPublicUrl;
  if (filesOrigin !== undefined && !isFilesOrigin(reply.request, filesOrigin)) {
    const ticket = issueFileTicket(
      { tenantId: file.tenant_id, fileId: file.id, sha256: file.sha256, disposition },
      deps.clock.now(),
    );
    return reply
      .header('cache-control', 'no-store')
      .redirect(`${filesOrigin}/f/${ticket}/${encodeURIComponent(file.name)}`, 303);
  }
  const size = Number(file.size);
  const range = parseRange(reply.request.headers.range, size);
  if (range === 'invalid') {
    return reply
      .status(416)
      .header('content-range', `bytes */${size}`)
      .send(errorBody(416, 'The requested range is not satisfiable', 'RANGE_NOT_SATISFIABLE'));
  }
  const type = typeOfBytes(await headOf(deps.files, file));
  void reply
    .headers(USER_BYTES_HEADERS)
    .header('content-type', type)
    .header('content-disposition', contentDisposition(disposition, file.name, type))
    .header('accept-ranges', 'bytes')
    .header('etag', `"${file.sha256}"`);
  if (range) {
    return reply
      .status(206)
      .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
      .header('content-length', range.end - range.start + 1)
      .send(await deps.files.open(file, range));
  }
  return reply.header('content-length', size).send(await deps.files.open(file));
}

/** Whether the request came to FILES_PUBLIC_URL's host (X-Forwarded-Host when TRUST_PROXY is on). */
export function isFilesOrigin(request: FastifyRequest, filesOrigin: string): boolean {
  return request.host.toLowerCase() === new URL(filesOrigin).host;
}

/** One `bytes=` range (suffix and open-ended forms included); several ranges are served whole. */
function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'invalid' | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return header.includes(',') ? undefined : 'invalid';
  const [, from, to] = match;
  if (from === '' && to === '') return 'invalid';
  if (from === '') {
    const length = Math.min(Number(to), size);
    return length <= 0 ? 'invalid' : { start: size - length, end: size - 1 };
  }
  const start = Number(from);
  const end = to === '' ? size - 1 : Math.min(Number(to), size - 1);
  if (start >= size || end < start) return 'invalid';
  return { start, end };
}

/**
 * Headers on every answer, set where the route did not set its own: no type guessing, no Referer
 * leaving with an address, and, on anything that is not one of our pages or their scripts and styles
 * (JSON, errors, images, archives), a policy that loads nothing, runs no script and may not be framed;
 * a page that sets no policy of its own, PAGE_FALLBACK_CSP.
 * User files carry USER_BYTES_HEADERS' sandbox as well (sendStoredFile); they are never typed HTML,
 * script or style (typeOfBytes).
 */
export function withSecurityHeaders(reply: FastifyReply): void {
  if (!reply.hasHeader('x-content-type-options')) void reply.header('x-content-type-options', 'nosniff');
  if (!reply.hasHeader('referrer-policy')) void reply.header('referrer-policy', 'no-referrer');
  const type = String(reply.getHeader('content-type') ?? '');
  // A script or style answers under the policy of the page that loads it (a worker's script would
  // take its own: none is given, so pdf.js's worker keeps what the signer page allows it).
  if (
    reply.hasHeader('content-security-policy') ||
    /^(text\/css|text\/javascript|application\/javascript)\b/.test(type)
  )
    return;
  if (/^text\/html\b/.test(type)) {
    // A page that set no policy of its own (the API reference's): its own scripts and styles only.
    void reply.header('content-security-policy', PAGE_FALLBACK_CSP);
  } else {
    // A file to save (an export, a signed PDF, an archive) carries what users wrote: sandboxed too.
    const file = reply.hasHeader('content-disposition');
    void reply.header(
      'content-security-policy',
      file ? USER_BYTES_HEADERS['content-security-policy'] : API_ANSWER_CSP,
    );
  }
}

/** The policy of a page of ours that sets none itself: what it loads comes from us, and no one frames it. */
export const PAGE_FALLBACK_CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The policy of every answer that is not a page: nothing loads, nothing runs, nothing frames it. */
export const API_ANSWER_CSP = "default-src 'none'; frame-ancestors 'none'";

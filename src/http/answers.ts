import type { FastifyReply } from 'fastify';
import type { FileRecord, FileStore } from '../store/files/file-store.js';

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

/**
 * The type a browser is told, decided from the file's own leading bytes, never from what its uploader
 * declared: the formats Signery handles, and `application/octet-stream` for anything else (text,
 * HTML, SVG and scripts included), which no browser renders.
 */
export function typeOfBytes(head: Uint8Array): string {
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

/**
 * The one place a stored user file's answer headers are decided: its type from its bytes, nosniff,
 * the sandbox CSP and its disposition (`inline` is honoured for PDFs only). Returns the type decided.
 */
export async function userFileHeaders(
  reply: FastifyReply,
  files: FileStore,
  file: FileRecord,
  disposition: 'inline' | 'attachment',
): Promise<string> {
  const type = typeOfBytes(await headOf(files, file));
  void reply
    .headers(USER_BYTES_HEADERS)
    .header('content-type', type)
    .header('content-disposition', contentDisposition(disposition, file.name, type));
  return type;
}

/** Answers a stored user file whole: its bytes, with the headers of userFileHeaders and its length. */
export async function sendStoredFile(
  reply: FastifyReply,
  files: FileStore,
  file: FileRecord,
  disposition: 'inline' | 'attachment',
): Promise<FastifyReply> {
  await userFileHeaders(reply, files, file, disposition);
  return reply.header('content-length', Number(file.size)).send(await files.open(file));
}

/**
 * Headers on every answer, set where the route did not set its own: no type guessing, no Referer
 * leaving with an address, and, on anything that is not one of our pages or their scripts and styles
 * (JSON, errors, images, archives), a policy that loads nothing, runs no script and may not be framed;
 * a page that sets no policy of its own, PAGE_FALLBACK_CSP.
 * User files carry USER_BYTES_HEADERS' sandbox as well (userFileHeaders); they are never typed HTML,
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

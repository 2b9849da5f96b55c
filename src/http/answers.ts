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

/** `inline` (shown by the browser) or `attachment` (saved), with the file's name in UTF-8. */
export function contentDisposition(disposition: 'inline' | 'attachment', name: string): string {
  return `${disposition}; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** Answers a stored file whole: its bytes with their type, length and name. */
export async function sendStoredFile(
  reply: FastifyReply,
  files: FileStore,
  file: FileRecord,
  disposition: 'inline' | 'attachment',
): Promise<FastifyReply> {
  return reply
    .header('content-type', file.mimetype)
    .header('content-length', Number(file.size))
    .header('content-disposition', contentDisposition(disposition, file.name))
    .send(await files.open(file));
}

import type { Kysely } from 'kysely';
import type { Deps } from '../deps.js';
import { enqueue } from '../../jobs/queue.js';
import type { Database } from '../../store/db/schema.js';
import type { ReleasedFile } from './file-references.js';

/** The job that removes the bytes of file records a change deleted, once no record has them. */
export const BYTES_REMOVAL_JOB = 'files.removeBytes';

export interface BytesRemovalPayload {
  sha256s: string[];
  /** When the change began (ISO): bytes written since (an upload of the same content) stay. */
  writtenBefore: string;
}

/**
 * Inside the transaction that deleted file records (`releaseFiles`): the removal of their bytes, as a
 * job that exists exactly when the deletion commits and is retried until done, so neither a crash
 * nor an unreachable blob store after the commit leaves them for long. Answers the payload, for the
 * caller's own attempt right after commit (`removeBytes`).
 */
export async function queueBytesRemoval(
  trx: Kysely<Database>,
  options: {
    released: readonly ReleasedFile[];
    writtenBefore: Date;
    now: Date;
    requestId?: string | undefined;
  },
): Promise<BytesRemovalPayload | undefined> {
  if (options.released.length === 0) return undefined;
  const payload: BytesRemovalPayload = {
    sha256s: [...new Set(options.released.map((file) => file.sha256))],
    writtenBefore: options.writtenBefore.toISOString(),
  };
  await enqueue(trx, {
    type: BYTES_REMOVAL_JOB,
    payload: { ...payload },
    now: options.now,
    ...(options.requestId !== undefined ? { requestId: options.requestId } : {}),
  });
  return payload;
}

/** Removes the bytes no file record has any more (FileStore.removeUnreferencedBytes); answers how many. */
export function removeBytes(deps: Pick<Deps, 'files'>, payload: BytesRemovalPayload): Promise<number> {
  return deps.files.removeUnreferencedBytes(payload.sha256s, new Date(payload.writtenBefore));
}

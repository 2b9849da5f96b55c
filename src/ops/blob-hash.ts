import { createHash } from 'node:crypto';
import type { BlobStore } from '../store/blobs/blob-store.js';

/**
 * SHA-256 and size of the bytes a store holds under `key`, read as a stream: what proves a blob
 * intact, since its key is the SHA-256 its bytes must have (BlobNotFound when there is none).
 */
export async function hashBlob(store: BlobStore, key: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of await store.get(key)) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}

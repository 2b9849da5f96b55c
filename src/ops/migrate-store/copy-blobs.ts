import type { Kysely } from 'kysely';
import { BlobNotFound, type BlobStore } from '../../store/blobs/blob-store.js';
import type { Database } from '../../store/db/schema.js';
import { hashBlob } from '../blob-hash.js';
import { forEachConcurrently } from '../concurrently.js';
import { countReferencedBlobs, referencedBlobs, type BlobRef } from '../inventory.js';
import { OperationFailed } from '../operation-failed.js';
import { megabytes, thousands, type Progress } from '../progress.js';

/** Blobs copied or hashed at once: each waits on the network or the disk much more than on the CPU. */
const CONCURRENCY = 8;
const PAGE = 1000;

export interface BlobCopy {
  /** The source's database: its `files` rows say which blobs to copy. */
  db: Kysely<Database>;
  source: BlobStore;
  target: BlobStore;
  progress: Progress;
}

/**
 * Copies every blob the `files` rows reference into the target store, skipping those already there
 * with their size (a previous run's: the key is the SHA-256 of the bytes, and the verification that
 * follows hashes each one). `put` hashes the bytes on their way, so a source blob whose bytes no
 * longer match its key is refused, not spread.
 */
export async function copyBlobs(copy: BlobCopy): Promise<{ blobs: number; copied: number; bytes: number }> {
  const { db, source, target, progress } = copy;
  const { blobs } = await countReferencedBlobs(db);
  let copied = 0;
  let bytes = 0;
  const counter = progress.counter(
    'blobs',
    blobs,
    () =>
      `${thousands(copied)} copied (${megabytes(bytes)}), ${thousands(counter.count - copied)} already there`,
  );
  await forEachConcurrently(each(referencedBlobs(db, PAGE)), CONCURRENCY, async (blob) => {
    const there = await target.stat(blob.sha256);
    if (there?.size !== blob.size) {
      // Under its key with another size: a damaged copy; put would keep it (same key), so it goes first.
      if (there) await target.delete(blob.sha256);
      await copyOne(source, target, blob);
      copied++;
      bytes += blob.size;
    }
    counter.add();
  });
  counter.done();
  return { blobs, copied, bytes };
}

async function copyOne(source: BlobStore, target: BlobStore, blob: BlobRef): Promise<void> {
  let bytes;
  try {
    bytes = await source.get(blob.sha256);
  } catch (error) {
    if (error instanceof BlobNotFound) {
      throw new OperationFailed(
        `The blob ${blob.sha256}, which files of the source reference, is missing from the source's store: the source is damaged. Restore it from a backup first.`,
      );
    }
    throw error;
  }
  const stored = await target.put(bytes);
  if (stored.sha256 !== blob.sha256) {
    throw new OperationFailed(
      `The blob ${blob.sha256} of the source does not hold the bytes its name promises (their SHA-256 is ${stored.sha256}): the source is damaged. Restore it from a backup first.`,
    );
  }
}

/**
 * Hashes every blob the `files` rows reference as the target store holds it. A blob missing or
 * damaged there is copied again from the source once (when the two stores differ) and hashed again;
 * what still fails is answered, a few examples at most.
 */
export async function verifyBlobs(
  copy: BlobCopy & { sameStore: boolean },
): Promise<{ checked: number; repaired: number; bytes: number; failures: string[]; failed: number }> {
  const { db, source, target, progress, sameStore } = copy;
  const { blobs } = await countReferencedBlobs(db);
  const failures: string[] = [];
  let failed = 0;
  let repaired = 0;
  let bytes = 0;
  const counter = progress.counter('verify blobs (SHA-256)', blobs, () => `${megabytes(bytes)} hashed`);
  await forEachConcurrently(each(referencedBlobs(db, PAGE)), CONCURRENCY, async (blob) => {
    let problem = await problemWith(target, blob);
    if (problem && !sameStore) {
      await target.delete(blob.sha256);
      await copyOne(source, target, blob);
      problem = await problemWith(target, blob);
      if (!problem) repaired++;
    }
    if (problem) {
      failed++;
      if (failures.length < 5) failures.push(`blob ${blob.sha256}: ${problem}`);
    }
    bytes += blob.size;
    counter.add();
  });
  counter.done();
  return { checked: blobs, repaired, bytes, failures, failed };
}

async function problemWith(store: BlobStore, blob: BlobRef): Promise<string | undefined> {
  try {
    const { sha256, size } = await hashBlob(store, blob.sha256);
    if (sha256 !== blob.sha256) return `its bytes have the SHA-256 ${sha256}`;
    if (size !== blob.size) return `${size} bytes where the files say ${blob.size}`;
    return undefined;
  } catch (error) {
    if (error instanceof BlobNotFound) return 'missing';
    throw error;
  }
}

/** The blobs of the pages, one by one. */
async function* each(pages: AsyncIterable<BlobRef[]>): AsyncIterable<BlobRef> {
  for await (const page of pages) yield* page;
}

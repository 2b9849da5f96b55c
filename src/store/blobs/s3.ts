import { randomUUID } from 'node:crypto';
import { open, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { CompletedPart } from '@aws-sdk/client-s3';
import {
  BlobNotFound,
  BlobTooLarge,
  RunningSha256,
  checkRange,
  isSha256,
  putExtendedByStream,
} from './blob-store.js';
import type { BlobStore, ByteRange, ExtendOptions, LocalFile, PutOptions, StoredBlob } from './blob-store.js';

export interface S3BlobStoreOptions {
  bucket: string;
  region: string;
  /** For S3-compatible services (MinIO, Garage, R2…); AWS when omitted. */
  endpoint?: string;
  /** Both or neither; without them the SDK's default credential chain applies. */
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle?: boolean;
  /** Key prefix, to share a bucket with other data; a trailing `/` is added when missing. */
  prefix?: string;
}

/** Multipart part size: above S3's 5 MiB minimum, and at most one part is held in memory at a time. */
const PART_SIZE = 8 * 1024 * 1024;

/**
 * Blob store on S3 or an S3-compatible service. Blobs live at `<prefix>blobs/<sha256>`. A blob smaller
 * than a multipart part is read whole before it is sent, so it goes straight to its key; for a larger
 * one the key is only known once every byte has been read, so the put first uploads to
 * `<prefix>tmp/<uuid>` and then copies server-side into place. Either way a blob is never visible
 * half-written. A crash mid-put can leave
 * objects under `tmp/` and incomplete multipart uploads: give the bucket a lifecycle rule expiring
 * `<prefix>tmp/` and aborting incomplete multipart uploads after a day.
 *
 * ```ts
 * const blobs = new S3BlobStore({ bucket: 'signery', region: 'eu-west-3' });
 * const { sha256 } = await blobs.put(stream, { maxBytes: 40 * 1024 * 1024 });
 * const head = await blobs.get(sha256, { start: 0, end: 1023 });
 * ```
 */
export class S3BlobStore implements BlobStore {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;

  constructor(options: S3BlobStoreOptions) {
    const { bucket, region, endpoint, accessKeyId, secretAccessKey, forcePathStyle, prefix } = options;
    this.#client = new S3Client({
      region,
      endpoint,
      forcePathStyle,
      credentials:
        accessKeyId !== undefined && secretAccessKey !== undefined
          ? { accessKeyId, secretAccessKey }
          : undefined,
      // The SDK's default CRC checksums are rejected or mishandled by many S3-compatible servers.
      // Integrity is covered without them: TLS or a signed payload in transit, and the SHA-256 key.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    this.#bucket = bucket;
    this.#prefix =
      prefix === undefined || prefix === '' || prefix.endsWith('/') ? (prefix ?? '') : `${prefix}/`;
  }

  /** The base streamed from S3 (its objects are not local files), then put as any stream. */
  putExtended(base: string, appended: Promise<Uint8Array>, options?: ExtendOptions): Promise<StoredBlob> {
    return putExtendedByStream(this, base, appended, options);
  }

  async put(source: Readable | Buffer, options: PutOptions = {}): Promise<StoredBlob> {
    const { maxBytes } = options;
    if (Buffer.isBuffer(source) && maxBytes !== undefined && source.length > maxBytes) {
      throw new BlobTooLarge(maxBytes);
    }
    const tmpKey = `${this.#prefix}tmp/${randomUUID()}`;
    const hash = new RunningSha256(options.prefixHash);
    let uploadId: string | undefined;
    const parts: CompletedPart[] = [];
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let uploaded = false;

    const uploadPart = async (body: Buffer): Promise<void> => {
      if (uploadId === undefined) {
        const created = await this.#client.send(
          new CreateMultipartUploadCommand({ Bucket: this.#bucket, Key: tmpKey }),
        );
        if (created.UploadId === undefined) throw new Error('S3 returned no multipart UploadId');
        uploadId = created.UploadId;
      }
      const PartNumber = parts.length + 1;
      const { ETag } = await this.#client.send(
        new UploadPartCommand({
          Bucket: this.#bucket,
          Key: tmpKey,
          UploadId: uploadId,
          PartNumber,
          Body: body,
        }),
      );
      parts.push({ PartNumber, ETag });
    };

    try {
      const chunks: Iterable<Buffer> | AsyncIterable<Buffer | string> = Buffer.isBuffer(source)
        ? [source]
        : (source as AsyncIterable<Buffer | string>);
      // Awaiting each part inside the loop is the backpressure: no chunk is pulled while one uploads.
      // Throwing out of the loop destroys the source stream.
      for await (const raw of chunks) {
        const chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
        if (maxBytes !== undefined && hash.size + chunk.length > maxBytes) throw new BlobTooLarge(maxBytes);
        hash.update(chunk);
        pending.push(chunk);
        pendingBytes += chunk.length;
        while (pendingBytes >= PART_SIZE) {
          const buffered = Buffer.concat(pending, pendingBytes);
          await uploadPart(buffered.subarray(0, PART_SIZE));
          // Copied so the leftover does not keep the whole uploaded part alive.
          const rest = Buffer.from(buffered.subarray(PART_SIZE));
          pending = rest.length > 0 ? [rest] : [];
          pendingBytes = rest.length;
        }
      }

      const last = Buffer.concat(pending, pendingBytes);
      pending = [];
      const { sha256, size } = hash.digest();
      if (uploadId === undefined) {
        // Every byte is in hand before anything is sent, so the key is known: the blob goes straight
        // to it, in one request instead of four (PutObject makes an object visible whole or not at
        // all; identical bytes already there are simply written again). bench/migrate-store: copying
        // 20,100 small blobs to s3rver took 5 min 56 s through tmp/.
        await this.#client.send(
          new PutObjectCommand({ Bucket: this.#bucket, Key: this.#blobKey(sha256), Body: last }),
        );
        return { sha256, size };
      }
      if (last.length > 0) await uploadPart(last);
      await this.#client.send(
        new CompleteMultipartUploadCommand({
          Bucket: this.#bucket,
          Key: tmpKey,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
      uploaded = true;

      // Copied even when the bytes are stored already: the object's new LastModified keeps the sweep
      // of unreferenced blobs away from bytes an upload is about to reference (deleteIfOlderThan).
      await this.#client.send(
        new CopyObjectCommand({
          Bucket: this.#bucket,
          Key: this.#blobKey(sha256),
          CopySource: `${this.#bucket}/${tmpKey.split('/').map(encodeURIComponent).join('/')}`,
        }),
      );
      return { sha256, size };
    } finally {
      // Best effort: the put's own outcome matters more than the cleanup's, and the lifecycle rule
      // described above catches whatever is left behind.
      if (uploaded) {
        await this.#client
          .send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: tmpKey }))
          .catch(() => undefined);
      } else if (uploadId !== undefined) {
        await this.#client
          .send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key: tmpKey, UploadId: uploadId }))
          .catch(() => undefined);
      }
    }
  }

  async get(sha256: string, range?: ByteRange): Promise<Readable> {
    if (!isSha256(sha256)) throw new BlobNotFound(sha256);
    let Range: string | undefined;
    let expectedLength: number | undefined;
    if (range !== undefined) {
      // A range is checked against the blob's size first: one past its end is a RangeError, not
      // whatever the server makes of it. A whole blob needs no HEAD: the GET answers NoSuchKey.
      const head = await this.stat(sha256);
      if (head === undefined) throw new BlobNotFound(sha256);
      const end = checkRange(range, head.size);
      Range = `bytes=${range.start}-${end}`;
      expectedLength = end - range.start + 1;
    }
    try {
      const { Body, ContentLength } = await this.#client.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key: this.#blobKey(sha256), Range }),
      );
      if (!(Body instanceof Readable)) throw new Error('S3 GetObject returned no Node.js stream');
      // A server or proxy that ignores Range answers 200 with everything; serving that as the
      // requested slice would corrupt the response silently.
      if (expectedLength !== undefined && ContentLength !== undefined && ContentLength !== expectedLength) {
        Body.destroy();
        throw new Error(`S3 returned ${ContentLength} bytes for ${Range}`);
      }
      return Body;
    } catch (error) {
      // Unknown, or deleted between the HEAD and the GET.
      if (isNotFound(error)) throw new BlobNotFound(sha256);
      throw error;
    }
  }

  async read(sha256: string): Promise<Buffer> {
    return buffer(await this.get(sha256));
  }

  /**
   * Downloads the blob, streamed, into a temporary file that has no name from the start (unlinked
   * once open), so nothing is left behind whatever happens to the process.
   */
  async openFile(sha256: string): Promise<LocalFile> {
    const body = await this.get(sha256);
    const path = join(tmpdir(), `signery-blob-${randomUUID()}`);
    const handle = await open(path, 'wx+', 0o600);
    try {
      await unlink(path);
      for await (const chunk of body as AsyncIterable<Buffer>) await handle.write(chunk);
      const { size } = await handle.stat();
      return { fd: handle.fd, size, close: () => handle.close() };
    } catch (error) {
      body.destroy();
      await handle.close();
      throw error;
    }
  }

  async stat(sha256: string): Promise<{ size: number } | undefined> {
    // An invalid key names no blob, so it gets the same answer as an unknown one.
    if (!isSha256(sha256)) return undefined;
    try {
      const { ContentLength } = await this.#client.send(
        new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#blobKey(sha256) }),
      );
      return { size: ContentLength ?? 0 };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async delete(sha256: string): Promise<void> {
    if (!isSha256(sha256)) return;
    // S3 answers 204 for a missing key too.
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#blobKey(sha256) }));
  }

  /**
   * S3 has no delete conditional on the time an object was written: between this HEAD and the
   * DELETE (milliseconds), a put of the very same bytes, unreferenced for the whole grace period until
   * then, would be undone. The sweep's grace period makes that a day-old coincidence.
   */
  async deleteIfOlderThan(sha256: string, olderThan: Date): Promise<boolean> {
    if (!isSha256(sha256)) return false;
    const Key = this.#blobKey(sha256);
    try {
      const { LastModified } = await this.#client.send(new HeadObjectCommand({ Bucket: this.#bucket, Key }));
      if (LastModified === undefined || LastModified >= olderThan) return false;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key }));
    return true;
  }

  async *list(): AsyncIterable<string> {
    const Prefix = `${this.#prefix}blobs/`;
    let ContinuationToken: string | undefined;
    do {
      const page = await this.#client.send(
        new ListObjectsV2Command({ Bucket: this.#bucket, Prefix, ContinuationToken }),
      );
      for (const { Key } of page.Contents ?? []) {
        const name = Key?.slice(Prefix.length);
        if (name !== undefined && isSha256(name)) yield name;
      }
      ContinuationToken = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (ContinuationToken !== undefined);
  }

  async sweepTemporary(olderThan: Date): Promise<number> {
    const Prefix = `${this.#prefix}tmp/`;
    let removed = 0;
    let ContinuationToken: string | undefined;
    do {
      const page = await this.#client.send(
        new ListObjectsV2Command({ Bucket: this.#bucket, Prefix, ContinuationToken }),
      );
      for (const { Key, LastModified } of page.Contents ?? []) {
        if (Key === undefined || LastModified === undefined || LastModified >= olderThan) continue;
        await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key }));
        removed++;
      }
      ContinuationToken = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (ContinuationToken !== undefined);
    removed += await this.#abortStaleUploads(Prefix, olderThan);
    return removed;
  }

  /** Multipart uploads begun under `prefix` before `olderThan` and never completed. */
  async #abortStaleUploads(Prefix: string, olderThan: Date): Promise<number> {
    let aborted = 0;
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    for (;;) {
      const page = await this.#client
        .send(new ListMultipartUploadsCommand({ Bucket: this.#bucket, Prefix, KeyMarker, UploadIdMarker }))
        .catch((error: unknown) => {
          // Some S3-compatible servers (s3rver) cannot list uploads: the bucket's lifecycle rule
          // (docs/operations.md) is what aborts them there.
          if (error instanceof S3ServiceException && error.name === 'NotImplemented') return undefined;
          throw error;
        });
      if (page === undefined) return aborted;
      for (const { Key, UploadId, Initiated } of page.Uploads ?? []) {
        if (Key === undefined || UploadId === undefined || Initiated === undefined || Initiated >= olderThan)
          continue;
        await this.#client.send(new AbortMultipartUploadCommand({ Bucket: this.#bucket, Key, UploadId }));
        aborted++;
      }
      if (page.IsTruncated !== true) return aborted;
      KeyMarker = page.NextKeyMarker;
      UploadIdMarker = page.NextUploadIdMarker;
    }
  }

  async ping(): Promise<void> {
    await this.#client.send(new HeadBucketCommand({ Bucket: this.#bucket }));
  }

  close(): Promise<void> {
    this.#client.destroy();
    return Promise.resolve();
  }

  #blobKey(sha256: string): string {
    return `${this.#prefix}blobs/${sha256}`;
  }
}

/** End offset to read to, clamped like HTTP; RangeError when nothing of the blob is covered. */

function isNotFound(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === 'NotFound' || error.name === 'NoSuchKey');
}

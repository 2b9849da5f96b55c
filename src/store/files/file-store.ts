import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { Kysely, Selectable } from 'kysely';
import { BlobTooLarge } from '../blobs/blob-store.js';
import type {
  BlobStore,
  ByteRange,
  ExtendOptions,
  LocalFile,
  PutOptions,
  StoredBlob,
} from '../blobs/blob-store.js';
import { writeJson } from '../db/json.js';
import { Sha512Tap } from './parallel-sha512.js';
import type { Database, FileTable } from '../db/schema.js';

export type FileRecord = Selectable<FileTable>;

/** Bytes in the blob store with their SHA-512 (FileStore.storeBytes), before they become a file. */
export interface StoredBytes extends StoredBlob {
  checksum: string;
}

/** What a repair at upload changed (issue 23): the stored bytes are the upload plus the repair. */
export interface FileRepair {
  problem: string;
  /** Size and SHA-512 hex of the bytes as uploaded (a prefix of the stored file). */
  originalSize: number;
  originalChecksum: string;
}

export interface NewFile {
  tenantId: string;
  organizationId?: string | null;
  ownerId: string | null;
  name: string;
  mimetype: string;
  kind: string;
  maxBytes?: number;
  /** Recipient uploads: the share they come through (spec Files usage rule 2). */
  shareId?: string | null;
  /** Already in use when saved (a document's next main file): `used_by` and `used_at` set at once. */
  usedBy?: string;
  pages?: number | null;
  repair?: FileRepair;
}

/**
 * Files as the API sees them: opaque random ids over content-addressed blobs. Each save gets a new
 * id even for bytes already stored (the usage rules act on ids), while the bytes are kept once.
 * Blob first, then the row: a crash in between leaves at worst an unreferenced blob for the sweep.
 *
 * ```ts
 * const files = new FileStore(db, blobs);
 * const file = await files.save(request.file.stream, { tenantId, ownerId, name, mimetype, kind: 'saveFile' });
 * const bytes = await files.open(file.id);
 * ```
 */
/** Blob keys whose references are looked up in one statement by the sweep. */
const SWEEP_BATCH = 500;

export class FileStore {
  readonly #db: Kysely<Database>;
  readonly #blobs: BlobStore;

  constructor(db: Kysely<Database>, blobs: BlobStore) {
    this.#db = db;
    this.#blobs = blobs;
  }

  /**
   * `db` is the caller's transaction when the row must commit with its change (and on SQLite, whose
   * single connection a transaction holds, it must be passed to avoid waiting on itself).
   */
  async save(
    source: Readable | Buffer,
    file: NewFile,
    now = new Date(),
    db: Kysely<Database> = this.#db,
  ): Promise<FileRecord> {
    const stored = await this.storeBytes(
      source,
      file.maxBytes !== undefined ? { maxBytes: file.maxBytes } : {},
    );
    return this.insert(db, file, stored, now);
  }

  /**
   * The bytes of a file, durable in the blob store, not yet a file: `insert` makes one of them (in
   * the transaction that also writes what comes with it). Bytes never inserted stay unreferenced.
   */
  async storeBytes(source: Readable | Buffer, options: PutOptions = {}): Promise<StoredBytes> {
    // The SHA-512 checksum (Contract: File record) is computed on the way, like the blob's SHA-256;
    // for a stream, on a worker thread while the blob store writes (Sha512Tap).
    if (Buffer.isBuffer(source)) {
      const blob = await this.#blobs.put(source, options);
      return { ...blob, checksum: createHash('sha512').update(source).digest('hex') };
    }
    const tap = new Sha512Tap();
    source.on('error', (error) => tap.destroy(error));
    // A source that failed before this point (a truncated upload, while the caller was still
    // checking rights) emits nothing more: fail the blob write now rather than leave it waiting.
    if (source.destroyed && !source.readableEnded) {
      tap.destroy(source.errored ?? new Error('The upload stream closed before its end'));
    }
    try {
      const blob = await this.#blobs.put(source.pipe(tap), options);
      return { ...blob, checksum: await tap.digest() };
    } finally {
      tap.destroy();
    }
  }

  /**
   * The bytes of `base` followed by `appended`, durable in the blob store, with their SHA-512 (like
   * `storeBytes`): a seal of a large file, its revisions after the original (issue 26). The base is
   * read where it is stored, in reused buffers, and hashed on a worker thread as it is copied.
   */
  async storeExtended(
    base: Pick<FileRecord, 'sha256'>,
    appended: Promise<Uint8Array>,
    options: Omit<ExtendOptions, 'observe'> = {},
  ): Promise<StoredBytes> {
    const sha512 = new Sha512Tap();
    try {
      const blob = await this.#blobs.putExtended(base.sha256, appended, {
        ...options,
        observe: (chunk) => sha512.update(chunk),
      });
      sha512.finish();
      return { ...blob, checksum: await sha512.digest() };
    } finally {
      sha512.destroy();
    }
  }

  /** Makes a file of stored bytes: its row, written in `db` (the caller's transaction). */
  async insert(db: Kysely<Database>, file: NewFile, stored: StoredBytes, now: Date): Promise<FileRecord> {
    const record = newRecord(file, stored, stored.checksum, now);
    await db.insertInto('files').values(record).execute();
    return record;
  }

  /**
   * Removes the blobs no file references that were written before `olderThan`; answers how many. They
   * are what a crash between a blob and its row leaves, or a change that lost its race and rolled
   * back. References are read in batches; each removal is conditional on the blob's age
   * (BlobStore.deleteIfOlderThan), so an upload that reuses the bytes meanwhile keeps them.
   */
  async sweepUnreferenced(olderThan: Date): Promise<number> {
    let removed = 0;
    let batch: string[] = [];
    for await (const sha256 of this.#blobs.list()) {
      batch.push(sha256);
      if (batch.length === SWEEP_BATCH) {
        removed += await this.removeUnreferencedBytes(batch, olderThan);
        batch = [];
      }
    }
    if (batch.length > 0) removed += await this.removeUnreferencedBytes(batch, olderThan);
    return removed;
  }

  /**
   * Removes the blobs among `sha256s` that no file references and that no put wrote at `olderThan` or
   * later; answers how many. After a change that deleted file records has committed (a hard delete),
   * with `olderThan` the moment the change began: an upload of the same bytes since then writes them
   * anew and keeps them. A crash before this runs leaves the blobs to a retry (core/files/bytes-removal.ts)
   * or `sweepUnreferenced`.
   */
  async removeUnreferencedBytes(sha256s: readonly string[], olderThan: Date): Promise<number> {
    const keys = [...new Set(sha256s)];
    if (keys.length === 0) return 0;
    const referenced = new Set(
      (
        await this.#db.selectFrom('files').select('sha256').distinct().where('sha256', 'in', keys).execute()
      ).map((row) => row.sha256),
    );
    let removed = 0;
    for (const sha256 of keys) {
      if (!referenced.has(sha256) && (await this.#blobs.deleteIfOlderThan(sha256, olderThan))) removed++;
    }
    return removed;
  }

  /** Stored bytes in one buffer. */
  readBytes(stored: Pick<StoredBytes, 'sha256'>): Promise<Buffer> {
    return this.#blobs.read(stored.sha256);
  }

  /**
   * Saves bytes held in memory inside the caller's transaction `trx`, and runs `work` (the rest of that
   * transaction) while the blob is being made durable, then waits for it. The row is written early but
   * commits only after the blob is durable, so blob first, then the row still holds for anyone who can
   * see the row; the request just stops waiting for the filesystem and the database one after the other.
   *
   * ```ts
   * await writeTransaction(db, dialect, (trx) =>
   *   files.saveWith(trx, signedPdf, { tenantId, ownerId, name, mimetype, kind: 'signed' }, now, (file) =>
   *     trx.updateTable('documents').set({ main_file_id: file.id }).where('id', '=', id).execute(),
   *   ),
   * );
   * ```
   */
  async saveWith<T>(
    trx: Kysely<Database>,
    bytes: Buffer,
    file: NewFile,
    now: Date,
    work: (record: FileRecord) => Promise<T>,
  ): Promise<T> {
    if (file.maxBytes !== undefined && bytes.length > file.maxBytes) throw new BlobTooLarge(file.maxBytes);
    const stored = this.#blobs.put(bytes);
    // Awaited below, maybe only after it settles: a rejection meanwhile must not count as unhandled.
    stored.catch(() => undefined);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const checksum = createHash('sha512').update(bytes).digest('hex');
    const record = newRecord(file, { sha256, size: bytes.length }, checksum, now);
    let result: T;
    try {
      await trx.insertInto('files').values(record).execute();
      result = await work(record);
    } catch (error) {
      // The blob may still land: at worst unreferenced, for the sweep. Its own failure is this one's.
      await stored.catch(() => undefined);
      throw error;
    }
    const blob = await stored;
    if (blob.sha256 !== sha256) throw new Error(`blob stored as ${blob.sha256}, expected ${sha256}`);
    return result;
  }

  /** The file record of a tenant, or undefined: ids of other tenants do not exist for the caller. */
  async find(tenantId: string, id: string): Promise<FileRecord | undefined> {
    return this.#db
      .selectFrom('files')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
  }

  /** A file's bytes, or a range of them; also the bytes just stored (StoredBytes), before their row. */
  async open(file: Pick<FileRecord, 'sha256'>, range?: ByteRange): Promise<Readable> {
    return this.#blobs.get(file.sha256, range);
  }

  /** The file as a local file open for reading at any offset (BlobStore.openFile); close it when done. */
  openFile(file: Pick<FileRecord, 'sha256'>): Promise<LocalFile> {
    return this.#blobs.openFile(file.sha256);
  }

  /** The file's bytes in one buffer. */
  read(file: Pick<FileRecord, 'sha256'>): Promise<Buffer> {
    return this.#blobs.read(file.sha256);
  }
}

function newRecord(file: NewFile, blob: StoredBlob, checksum: string, now: Date): FileRecord {
  return {
    id: randomBytes(16).toString('hex'),
    tenant_id: file.tenantId,
    sha256: blob.sha256,
    size: blob.size,
    name: file.name,
    mimetype: file.mimetype,
    kind: file.kind,
    owner_id: file.ownerId,
    organization_id: file.organizationId ?? null,
    created_at: now.toISOString(),
    used_by: file.usedBy ?? null,
    used_at: file.usedBy !== undefined ? now.toISOString() : null,
    checksum,
    pages: file.pages ?? null,
    share_id: file.shareId ?? null,
    repair: file.repair ? writeJson(file.repair) : null,
  };
}

import { createHash, randomBytes } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import type { Kysely, Selectable } from 'kysely';
import type { BlobStore, ByteRange } from '../blobs/blob-store.js';
import type { Database, FileTable } from '../db/schema.js';

export type FileRecord = Selectable<FileTable>;

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
    // The SHA-512 checksum (Contract: File record) is computed on the way, like the blob's SHA-256.
    const sha512 = createHash('sha512');
    let body: Readable | Buffer = source;
    if (Buffer.isBuffer(source)) sha512.update(source);
    else {
      const tap = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          sha512.update(chunk);
          done(null, chunk);
        },
      });
      source.on('error', (error) => tap.destroy(error));
      body = source.pipe(tap);
    }
    const blob = await this.#blobs.put(body, file.maxBytes !== undefined ? { maxBytes: file.maxBytes } : {});
    const record: FileRecord = {
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
      used_by: null,
      used_at: null,
      checksum: sha512.digest('hex'),
      pages: null,
      share_id: file.shareId ?? null,
    };
    await db.insertInto('files').values(record).execute();
    return record;
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

  async open(file: FileRecord, range?: ByteRange): Promise<Readable> {
    return this.#blobs.get(file.sha256, range);
  }
}

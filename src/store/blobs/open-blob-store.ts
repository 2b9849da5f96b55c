import { join } from 'node:path';
import type { Config } from '../../base/config.js';
import type { BlobStore } from './blob-store.js';
import { FsBlobStore } from './fs.js';
import { S3BlobStore } from './s3.js';

/** S3 when S3_BUCKET is set, otherwise files under DATA_DIR/blobs. */
export function openBlobStore(config: Config): BlobStore {
  if (config.s3) return new S3BlobStore(config.s3);
  return new FsBlobStore({ root: join(config.dataDir, 'blobs') });
}

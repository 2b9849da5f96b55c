import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// s3rver ships no type declarations; this is the slice of its API the tests use.
interface S3rverOptions {
  address: string;
  port: number;
  directory: string;
  silent: boolean;
  configureBuckets: { name: string }[];
}
interface S3rverServer {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  store: FilesystemStore;
}
interface FilesystemStore {
  deleteObject(bucket: string, key: string): Promise<void>;
  getResourcePath(bucket: string, key: string, resource: string): string;
}
const S3rver = createRequire(import.meta.url)('s3rver') as new (options: S3rverOptions) => S3rverServer;

export interface RunningS3 {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The Contract's S3_* variables pointing at this server. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** A real S3-compatible server (s3rver) on an ephemeral loopback port, with one bucket. */
export async function startS3rver(bucket = 'test-bucket'): Promise<RunningS3> {
  const directory = await mkdtemp(join(tmpdir(), 'signery-s3rver-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    directory,
    silent: true,
    configureBuckets: [{ name: bucket }],
  });
  keepDirectories(server.store);
  const { port } = await server.run();
  // s3rver removes a directory a delete leaves empty, racing a put into it meanwhile (its write stream
  // then fails with ENOENT, unhandled, and the put never answers): every put goes through `tmp/`, so
  // concurrent uploads would meet that. A file that is not an object keeps the folders there.
  for (const folder of ['tmp', 'blobs']) {
    await mkdir(join(directory, bucket, folder), { recursive: true });
    await writeFile(join(directory, bucket, folder, 'keep'), '');
  }
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    region: 'us-east-1',
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    env: {
      S3_ENDPOINT: endpoint,
      S3_BUCKET: bucket,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
    },
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * s3rver removes the directories a delete leaves empty, while a put into one of them may be between
 * its mkdir and its open: that put fails with ENOENT, an unhandled stream error that ends the
 * process. Our S3 store puts and deletes objects under `tmp/` side by side (concurrent uploads, the
 * blob copies of migrate-store), so its deletes here remove the object's files and leave the
 * directories, which hold nothing S3 can see.
 */
function keepDirectories(store: FilesystemStore): void {
  store.deleteObject = async (bucket, key) => {
    await Promise.all(
      ['object', 'object.md5', 'metadata.json'].map((resource) =>
        rm(store.getResourcePath(bucket, key, resource), { force: true }),
      ),
    );
  };
}

import { loadConfig, type S3Config } from '../../base/config.js';
import { InvalidArguments } from '../operation-failed.js';

/** Where `signery migrate-store` copies an installation to. */
export interface MigrationTarget {
  /** The PostgreSQL database (`--to`). */
  url: string;
  /** Its schema (`--schema`); undefined: the database's default (`public`). */
  schema: string | undefined;
  /** The bucket the blobs go to (`--blobs`); undefined: they stay where the source keeps them. */
  blobs: S3Config | undefined;
}

const SCHEMA = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Reads `--to postgres://…`, `--schema` and `--blobs s3://bucket[/prefix]`. The bucket's endpoint,
 * region, credentials and path style come from the S3_* variables the nodes will be started with
 * (S3_BUCKET and S3_PREFIX excepted, which `--blobs` names).
 */
export function parseMigrationTarget(
  options: { to?: string | undefined; schema?: string | undefined; blobs?: string | undefined },
  env: Record<string, string | undefined>,
): MigrationTarget {
  const { to, schema, blobs } = options;
  if (!to || !/^postgres(ql)?:\/\/./.test(to)) {
    throw new InvalidArguments('--to must name the target database as a postgres:// URL');
  }
  if (schema !== undefined && !SCHEMA.test(schema)) {
    throw new InvalidArguments('--schema must be a lowercase SQL identifier (as DATABASE_SCHEMA)');
  }
  return { url: to, schema, blobs: blobs === undefined ? undefined : bucketOf(blobs, env) };
}

function bucketOf(url: string, env: Record<string, string | undefined>): S3Config {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!match) throw new InvalidArguments('--blobs must be an s3://bucket or s3://bucket/prefix URL');
  const prefix = (match[2] ?? '').replace(/\/+$/, '');
  const s3 = loadConfig({ ...env, S3_BUCKET: match[1], S3_PREFIX: prefix }).s3;
  if (!s3) throw new Error('unreachable: S3_BUCKET is set');
  return s3;
}

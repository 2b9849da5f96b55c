import type { S3Config } from '../base/config.js';

/** A database URL without its password, for what the command prints. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(a database URL)';
  }
}

/** The bucket (and prefix) blobs are kept in, as `--blobs` writes it. */
export function bucketUrl(s3: S3Config): string {
  return `s3://${s3.bucket}${s3.prefix ? `/${s3.prefix}` : ''}`;
}

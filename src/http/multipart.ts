import type { Multipart, MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError, LimitExceeded, ValidationError } from '../base/errors.js';
import { assertNoNul } from './validation.js';

/**
 * What one multipart request may hold (busboy's limits; docs/security.md: Limits). File sizes are
 * enforced while streaming to storage (per tenant limits), not here.
 */
export const MULTIPART_LIMITS = {
  fileSize: Number.MAX_SAFE_INTEGER,
  files: 1,
  fields: 20,
  fieldSize: 1024 * 1024,
  parts: 25,
};

export interface MultipartUpload<T> {
  /** What the consumer returned for the `file` part. */
  result: T;
  /** Text fields, whether sent before or after the file. */
  fields: Record<string, string>;
}

/**
 * Walks a multipart request, handing the one `file` part to `consume` as a stream (never buffered)
 * and collecting text fields. Fields sent after the file are still returned.
 */
export async function readMultipart<T>(
  request: FastifyRequest,
  consume: (file: MultipartFile, fieldsSoFar: Record<string, string>) => Promise<T>,
): Promise<MultipartUpload<T>> {
  if (request.isMultipart() && !hasBoundary(request.headers['content-type'])) {
    throw new ValidationError(
      'Content-Type multipart/form-data needs a boundary parameter of 1 to 70 characters',
    );
  }
  const fields: Record<string, string> = {};
  let result: { value: T } | undefined;
  // What the parser raises (a truncated body, a malformed part) is the request's fault: a 400, never
  // a 500. Errors of our own and those with a status (the part limits) keep theirs.
  const malformed = (error: unknown): Error =>
    error instanceof AppError || (error instanceof Error && 'statusCode' in error)
      ? error
      : new ValidationError('The multipart body is malformed or incomplete');
  const parts = request.parts()[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await parts.next().catch((error: unknown) => {
        throw malformed(error);
      });
      if (next.done) break;
      await readPart(next.value);
    }
  } finally {
    await parts.return?.();
  }
  if (!result) throw new ValidationError('file', 'is required');
  return { result: result.value, fields };

  async function readPart(part: Multipart): Promise<void> {
    if (part.type === 'file') {
      if (part.fieldname !== 'file' || result) {
        part.file.resume();
        throw new ValidationError(`${part.fieldname}`, 'is not allowed (send one file, in the field "file")');
      }
      // Once the parser has failed the file's stream, whatever the consumer then fails with (the
      // error itself, a premature close, a wrapped error) comes from the malformed body.
      let parserFailed = part.file.errored !== null;
      part.file.once('error', () => (parserFailed = true));
      result = {
        value: await consume(part, fields).catch((error: unknown) => {
          throw parserFailed ? malformed(error) : error;
        }),
      };
    } else {
      // busboy cuts a field at the limit and says so only in this flag: refuse rather than keep half.
      if (part.valueTruncated) {
        throw new LimitExceeded(
          `A multipart field is larger than ${MULTIPART_LIMITS.fieldSize / 1024 / 1024} MiB`,
        );
      }
      const value = typeof part.value === 'string' ? part.value : String(part.value);
      assertNoNul('body', { [part.fieldname]: value });
      fields[part.fieldname] = value;
    }
  }
}

/** busboy needs the boundary (RFC 2046: 1 to 70 characters) to split the body. */
function hasBoundary(contentType: string | undefined): boolean {
  const match = /;\s*boundary\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  const boundary = match?.[1] ?? match?.[2] ?? '';
  return boundary.length >= 1 && boundary.length <= 70;
}

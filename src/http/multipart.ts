import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../errors.js';

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
  const fields: Record<string, string> = {};
  let result: { value: T } | undefined;
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== 'file' || result) {
        part.file.resume();
        throw new ValidationError(
          `Request validation errors: BODY ERRORS: "${part.fieldname}" is not allowed (send one file, in the field "file")`,
        );
      }
      result = { value: await consume(part, fields) };
    } else {
      fields[part.fieldname] = typeof part.value === 'string' ? part.value : String(part.value);
    }
  }
  if (!result) throw new ValidationError('Request validation errors: BODY ERRORS: "file" is required');
  return { result: result.value, fields };
}

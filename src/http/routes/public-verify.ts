import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { LimitExceeded, ValidationError } from '../../base/errors.js';
import { VerificationReport } from '../../signing/verification-report.js';
import { verifyUpload } from '../../signing/verify-document.js';
import { readMultipart } from '../multipart.js';
import { withErrors } from '../schemas.js';

const MB = 1024 * 1024;

/** What a multipart body may add around the file (boundaries, part headers) before its size alone is refused. */
const MULTIPART_OVERHEAD = 64 * 1024;

/** PDF readers accept the `%PDF-` header anywhere in the first 1024 bytes (ISO 32000-2, 7.5.2 and Annex H). */
const HEADER_WINDOW = 1024;

/**
 * POST /verify (issue 27, the public verification page at PUBLIC_URL/verify): anyone, without an account,
 * sends a PDF (multipart `file`) and gets the report of POST /api/v1/verify, against the
 * installation's trust anchors; `dss=true` adds the ETSI TS 119 102-2 reports. The file is read into
 * memory, at most PUBLIC_VERIFY_MAX_MB (413 beyond), and dropped with the answer: no file record, no
 * blob, no audit record, nothing of it in a log line. Counted per client address under its own
 * rate limit (`public-verify`, RATE_LIMIT_PUBLIC_VERIFY_PER_MINUTE), whatever credential is sent.
 * Not part of the API (/api/v1): the OpenAPI document does not list it.
 */
export function publicVerifyRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  const { maxBytes } = deps.config.publicVerify;
  const tooLarge = () => new LimitExceeded(`The file is larger than the limit of ${maxBytes / MB} MB`);
  return async (app) => {
    app.post(
      '/verify',
      {
        config: { auth: 'none', rateLimitPolicy: 'public-verify' },
        schema: {
          hide: true,
          consumes: ['multipart/form-data'],
          querystring: Type.Object(
            {
              dss: Type.Optional(Type.Boolean({ default: false })),
              evidence: Type.Optional(Type.Boolean({ default: false })),
            },
            { additionalProperties: false },
          ),
          response: withErrors({ 200: VerificationReport }),
        },
      },
      async (request) => {
        // A body announced far over the limit is refused before a byte of it is read.
        const announced = Number(request.headers['content-length']);
        if (Number.isFinite(announced) && announced > maxBytes + MULTIPART_OVERHEAD) throw tooLarge();
        const { result } = await readMultipart(request, async (part) => ({
          bytes: await readAtMost(part.file, maxBytes, tooLarge),
          name: part.filename,
        }));
        const header = result.bytes.subarray(0, HEADER_WINDOW).indexOf('%PDF-');
        if (header < 0) throw new ValidationError('file', 'is not a PDF');
        return verifyUpload(deps, {
          pdf: new Uint8Array(result.bytes.buffer, result.bytes.byteOffset, result.bytes.length),
          name: result.name,
          dss: request.query.dss === true,
          evidence: request.query.evidence === true,
        });
      },
    );
  };
}

/**
 * The stream's bytes, in memory, when there are at most `maxBytes`; past them the rest is read and
 * dropped (so the answer reaches a client still sending) and `tooLarge()` is thrown.
 */
function readAtMost(stream: Readable, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
      else chunks.length = 0;
    });
    stream.once('end', () => (size > maxBytes ? reject(tooLarge()) : resolve(Buffer.concat(chunks, size))));
    stream.once('error', reject);
  });
}

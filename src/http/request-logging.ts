import {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';

/**
 * Fastify's request log lines, one per request: written when the answer has gone (at `info`, or
 * `error` when the response failed), carrying the request (its id, method, cleaned URL and remote
 * address), the status and the time taken. Fastify writes two (`incoming request`, then `request
 * completed`), each serialized, redacted and written on its own: at the default `info` level they
 * cost a document read half as much again (bench/README.md, `document-info`). A request whose
 * caller goes away before its answer gets its line then instead (`logAbortedRequests`).
 *
 * The line goes through a logger of its own, without the redaction paths (src/app.ts): everything
 * in it comes out of the `req`, `res` and `err` serializers, which keep only those fields and clean
 * the URL and the error's text (http/redact.ts), so the paths would find nothing to hide, and trying
 * them (every key of every object in the line, for `*.password` and the like) cost more than writing
 * the line. Whatever else a request logs goes through its own logger, redacted as before.
 */
export class OneLinePerRequest extends LogController {
  #lines: FastifyBaseLogger | undefined;

  override incomingRequest(): void {
    // The line written at completion carries the request.
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return;
    // The server's logger with its serializers and level, the request's id as a field.
    const lines = (this.#lines ??= reply.server.log.child({}, { redact: [] }));
    const line = {
      [this.requestIdLogLabel]: request.id,
      req: request,
      res: reply,
      responseTime: reply.elapsedTime,
    };
    if (error) lines.error({ ...line, err: error }, 'request errored');
    else lines.info(line, 'request completed');
  }
}

/**
 * The line of a request whose caller closed the connection before its answer went (it has no
 * `request completed`): `request aborted`, with the request.
 */
export function logAbortedRequests(app: FastifyInstance): void {
  app.addHook('onRequestAbort', (request, done) => {
    request.log.info({ req: request }, 'request aborted');
    done();
  });
}

import { STATUS_CODES } from 'node:http';
import type { ErrorObject } from 'ajv';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../base/errors.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import { validationMessage } from './validation.js';
import { API_ANSWER_CSP, withSecurityHeaders } from './answers.js';

/** The Contract's error body. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  code: string;
}

const CODE_BY_STATUS: Record<number, string> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  411: 'LENGTH_REQUIRED',
  413: 'LIMIT_EXCEEDED',
  414: 'LIMIT_EXCEEDED',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  431: 'LIMIT_EXCEEDED',
  503: 'UNAVAILABLE',
};

export function errorBody(statusCode: number, message: string, code?: string): ErrorBody {
  return {
    statusCode,
    error: STATUS_CODES[statusCode] ?? 'Error',
    message,
    code: code ?? CODE_BY_STATUS[statusCode] ?? (statusCode >= 500 ? 'INTERNAL_ERROR' : 'BAD_REQUEST'),
  };
}

// Fastify's and its plugins' own messages may repeat parts of the request (FST_ERR_BAD_URL quotes the
// URL with its token): they are never sent. These codes get a message that says what to fix; any other
// framework 4xx gets its status text.
const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'Request body is not valid JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: "Request body is empty but Content-Type is 'application/json'",
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Request body size did not match Content-Length',
  FST_ERR_BAD_URL: 'The request URL is malformed',
  FST_ERR_ASYNC_CONSTRAINT: 'The request could not be routed',
  FST_ERR_MAX_PARAM_LENGTH: 'A path parameter of the request URL is too long',
  FST_PARTS_LIMIT: 'Too many parts in the multipart request',
  FST_FILES_LIMIT: 'Send one file per request',
  FST_FIELDS_LIMIT: 'Too many fields in the multipart request',
  FST_PROTO_VIOLATION: 'Field names may not be __proto__ or constructor',
  FST_REQ_FILE_TOO_LARGE: 'The file is too large',
  FST_INVALID_JSON_FIELD_ERROR: 'A multipart field sent as application/json is not valid JSON',
  FST_MP_PREMATURE_CLOSE: 'The request ended before its multipart body was complete',
};

/** How long a client is asked to wait when a store cannot be reached. */
const RETRY_UNAVAILABLE_SECONDS = 5;

/**
 * The media types a route's body may have: its OpenAPI `consumes` (the uploads: multipart/form-data),
 * otherwise JSON, the spec's "Bodies are JSON unless stated".
 */
function acceptedTypes(error: FastifyError, reply: FastifyReply): readonly string[] {
  // The route asked for the parts of a multipart body: that is what it takes.
  if (error.code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return ['multipart/form-data'];
  const consumes = reply.request.routeOptions?.schema?.consumes;
  return consumes?.length ? consumes : ['application/json'];
}

/**
 * DESIGN, Errors: 415 UNSUPPORTED_MEDIA_TYPE "`message` names the types it takes". Never the type that
 * was sent: a header's text is the client's, not ours to repeat.
 */
function unsupportedMediaType(error: FastifyError, reply: FastifyReply): string {
  const types = acceptedTypes(error, reply);
  return `Unsupported Content-Type: this endpoint takes ${types.join(' or ')} (send the header Content-Type: ${types[0]})`;
}

/** A framework error (Fastify's, a plugin's) as the Contract's error, in our words: never its own text. */
function sendFrameworkError(error: FastifyError, reply: FastifyReply): void {
  // @fastify/multipart answers 406 to a non-multipart upload; it is the request's media type that is wrong.
  const status = error.code === 'FST_INVALID_MULTIPART_CONTENT_TYPE' ? 415 : (error.statusCode ?? 400);
  const message =
    status === 415
      ? unsupportedMediaType(error, reply)
      : (FASTIFY_MESSAGES[error.code] ?? STATUS_CODES[status] ?? 'Bad request');
  void reply.status(status).send(errorBody(status, message));
}

/**
 * Fastify's `frameworkErrors` option: the errors its router raises before any route or hook runs
 * (a malformed URL encoding, a path parameter over `maxParamLength`, a failed constraint).
 */
export function answerFrameworkError(error: FastifyError, _request: unknown, reply: FastifyReply): void {
  // No route was found, so no hook runs: the headers every answer carries are set here.
  void reply.header('content-type', 'application/json; charset=utf-8');
  withSecurityHeaders(reply);
  sendFrameworkError(error, reply);
}

// Node's HTTP parser refuses a request before Fastify sees it (the server's `clientError` event).
const CLIENT_ERRORS: Record<string, [status: number, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'The request line and headers are too large (at most 16 KiB)'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'The chunk extensions of the request body are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request was not received in time'],
  HPE_INVALID_CONTENT_LENGTH: [400, 'The Content-Length header is not valid'],
  HPE_UNEXPECTED_CONTENT_LENGTH: [400, 'Send either Content-Length or Transfer-Encoding, not both'],
  HPE_INVALID_TRANSFER_ENCODING: [400, 'The Transfer-Encoding header is not valid'],
  HPE_INVALID_CHUNK_SIZE: [400, 'The chunked request body is not valid'],
  HPE_INVALID_METHOD: [400, 'The request method is not valid'],
};

/**
 * Fastify's `clientErrorHandler` option: a request Node's HTTP parser refused (bad Content-Length,
 * headers over the limit, not HTTP at all) gets the Contract's error as a raw response, then the
 * connection is closed. The parser's error carries the raw request bytes: it is never logged whole.
 */
export function answerClientError(
  this: FastifyInstance,
  error: Error & { code?: string },
  socket: Socket,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'The request is not valid HTTP'];
  this.log.debug({ code: error.code, statusCode: status }, 'request refused by the HTTP parser');
  // As Node does: answer only if no response on this connection has started, or it would be corrupted.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const body = JSON.stringify(errorBody(status, message));
    // The headers every answer carries (withSecurityHeaders), this one written by hand.
    const security =
      `X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n` +
      `Content-Security-Policy: ${API_ANSWER_CSP}\r\n`;
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        security +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/** Turns every error, ours and Fastify's, into the Contract's shape: one place maps errors to HTTP. */
export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & { validation?: ErrorObject[] }, request, reply) => {
    if (error instanceof AppError) {
      // An upload refused mid-stream leaves the rest of its body unread: close the connection rather
      // than keep it alive with bytes pending (it would also hold up a graceful shutdown).
      if (error.statusCode === 413) void reply.header('connection', 'close');
      void reply
        .status(error.statusCode)
        .headers(error.headers)
        .send(errorBody(error.statusCode, error.message, error.code));
      return;
    }
    if (error.validation) {
      void reply
        .status(400)
        .send(errorBody(400, validationMessage(error.validationContext, error.validation)));
      return;
    }
    if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
      sendFrameworkError(error, reply);
      return;
    }
    if (isStoreUnavailable(error)) {
      request.log.warn({ err: error }, 'store unavailable');
      void reply
        .status(503)
        .header('retry-after', String(RETRY_UNAVAILABLE_SECONDS))
        .send(errorBody(503, 'The service is temporarily unavailable; try again shortly', 'UNAVAILABLE'));
      return;
    }
    request.log.error({ err: error }, 'request failed');
    void reply.status(500).send(errorBody(500, 'Internal server error', 'INTERNAL_ERROR'));
  });

  // A request that arrives on an open connection once closing has begun (Fastify's return503OnClosing,
  // turned off in app.ts, would answer it without a code) is refused in the Contract's shape.
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    return reply
      .status(503)
      .header('connection', 'close')
      .send(errorBody(503, 'The server is shutting down: send the request again', 'UNAVAILABLE'));
  });

  app.setNotFoundHandler((_request, reply) => {
    void reply.status(404).send(errorBody(404, 'No such endpoint', 'NOT_FOUND'));
  });
}

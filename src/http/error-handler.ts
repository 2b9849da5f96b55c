import { STATUS_CODES } from 'node:http';
import type { ErrorObject } from 'ajv';
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';
import { isStoreUnavailable } from '../store/unavailable.js';
import { validationMessage } from './validation.js';

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
  409: 'CONFLICT',
  411: 'LENGTH_REQUIRED',
  413: 'LIMIT_EXCEEDED',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
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

// Fastify's own messages for these repeat parts of the request; ours say what to fix instead.
const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'Request body is not valid JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: "Request body is empty but Content-Type is 'application/json'",
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Content-Type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Request body size did not match Content-Length',
  FST_ERR_BAD_URL: 'The request URL is malformed',
  FST_ERR_ASYNC_CONSTRAINT: 'The request could not be routed',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'Send this request as multipart/form-data',
  FST_PARTS_LIMIT: 'Too many parts in the multipart request',
  FST_FILES_LIMIT: 'Send one file per request',
  FST_FIELDS_LIMIT: 'Too many fields in the multipart request',
  FST_PROTO_VIOLATION: 'Field names may not be __proto__ or constructor',
};

/** How long a client is asked to wait when a store cannot be reached. */
const RETRY_UNAVAILABLE_SECONDS = 5;

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
    // @fastify/multipart answers 406 to a non-multipart upload; it is the request's media type that is wrong.
    const status =
      error.code === 'FST_INVALID_MULTIPART_CONTENT_TYPE'
        ? 415
        : typeof error.statusCode === 'number'
          ? error.statusCode
          : 500;
    if (status >= 400 && status < 500) {
      const message = FASTIFY_MESSAGES[error.code] ?? STATUS_CODES[status] ?? 'Bad request';
      void reply.status(status).send(errorBody(status, message));
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

  app.setNotFoundHandler((_request, reply) => {
    void reply.status(404).send(errorBody(404, 'No such endpoint', 'NOT_FOUND'));
  });
}

/**
 * Typed errors of the use cases. Each carries its HTTP status and the Contract's machine code;
 * they are turned into `{statusCode, error, message, code}` in one place (http/error-handler.ts).
 * Messages never repeat a token, key or password.
 */
export abstract class AppError extends Error {
  abstract readonly statusCode: number;
  abstract readonly code: string;
  /** Extra response headers (Retry-After). */
  headers: Record<string, string> = {};
}

/**
 * The base of an error class with a fixed status and code, and the message it says when given none;
 * the error is named after its class:
 *
 * ```ts
 * export class NotFound extends appError(404, 'NOT_FOUND') {}
 * export class Unauthenticated extends appError(401, 'UNAUTHENTICATED', 'Authentication required') {}
 * ```
 */
export function appError<const Status extends number, const Code extends string>(
  statusCode: Status,
  code: Code,
  defaultMessage = '',
) {
  return class extends AppError {
    /** The class's own name (`NotFound`, `PdfInvalid`), as logs and `error.name` checks read it. */
    override name = this.constructor.name;
    readonly statusCode = statusCode;
    readonly code = code;
    constructor(message = defaultMessage, options?: ErrorOptions) {
      super(message, options);
    }
  };
}

/** The parts of a request a validation error can name, as the spec's message labels them. */
export type RequestPart = 'body' | 'querystring' | 'params' | 'headers';

const PART_LABEL: Record<RequestPart, string> = {
  body: 'BODY',
  querystring: 'QUERY',
  params: 'PARAMS',
  headers: 'HEADERS',
};

/**
 * The spec's validation text (Errors, point 2), in Joi's words, written here only:
 * `Request validation errors: BODY ERRORS: "signatures[0].position.percentX" must be less than or equal to 1`.
 * Without a path, the problem is the request's as a whole.
 */
export function requestValidationText(part: RequestPart, path: string | undefined, problem: string): string {
  return `Request validation errors: ${PART_LABEL[part]} ERRORS: ${path === undefined ? '' : `"${path}" `}${problem}`;
}

/**
 * A request the API cannot take (400 VALIDATION_ERROR). Name the field at fault and what is wrong
 * with it, `new ValidationError('signatures[0].page', 'must be less than or equal to 2')`, and the
 * message is the spec's text (a `null` path: the body as a whole is at fault). A single argument is
 * a message of its own, for a request that is well formed but cannot be done.
 */
export class ValidationError extends appError(400, 'VALIDATION_ERROR') {
  /** The field at fault and what is wrong with it, when the error names one. */
  readonly field: { part: RequestPart; path: string; problem: string } | undefined;

  constructor(problem: string, options?: ErrorOptions);
  constructor(path: string | null, problem: string, options?: ErrorOptions & { part?: RequestPart });
  constructor(
    first: string | null,
    second?: string | ErrorOptions,
    third?: ErrorOptions & { part?: RequestPart },
  ) {
    if (typeof second === 'string') {
      const part = third?.part ?? 'body';
      super(requestValidationText(part, first ?? undefined, second), third);
      this.field = first === null ? undefined : { part, path: first, problem: second };
    } else {
      super(first ?? '', second);
      this.field = undefined;
    }
  }
}

export class FileNotUsable extends appError(400, 'FILE_NOT_USABLE') {}

export class Unauthenticated extends appError(401, 'UNAUTHENTICATED', 'Authentication required') {}

export class MfaRequired extends appError(
  403,
  'MFA_REQUIRED',
  'This session is locked: unlock it with a second factor',
) {}

export class Forbidden extends appError(403, 'FORBIDDEN') {}

export class NotFound extends appError(404, 'NOT_FOUND') {}

export class VersionMismatch extends appError(409, 'VERSION_MISMATCH', 'Version mismatch') {}

/** The consent statement a recipient accepted is not the one in force (it changed): reload and read it. */
export class ConsentChanged extends appError(409, 'CONSENT_CHANGED') {}

/** A unique name taken by another record (user name, organization name). */
export class Conflict extends appError(409, 'CONFLICT') {}

export class LimitExceeded extends appError(413, 'LIMIT_EXCEEDED') {}

/**
 * 503 UNAVAILABLE with Retry-After and `Connection: close`: a request whose body was still arriving when
 * the node's drain ended (http/drain.ts). Nothing of it was done; another node, or this one once
 * restarted, takes it again.
 */
export class ShuttingDown extends AppError {
  override name = 'ShuttingDown';
  readonly statusCode = 503;
  readonly code = 'UNAVAILABLE';
  constructor(retryAfterSeconds: number) {
    super('The server is shutting down and did not receive the whole request: send it again');
    this.headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterSeconds)));
    this.headers.connection = 'close';
  }
}

/** 429 RATE_LIMITED (or the code given), with Retry-After. */
export class RateLimited extends AppError {
  override name = 'RateLimited';
  readonly statusCode = 429;
  readonly code: string;
  constructor(message: string, retryAfterSeconds: number, code = 'RATE_LIMITED') {
    super(message);
    this.code = code;
    this.headers['retry-after'] = String(Math.max(1, Math.ceil(retryAfterSeconds)));
  }
}

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

export class ValidationError extends AppError {
  override name = 'ValidationError';
  readonly statusCode = 400;
  readonly code = 'VALIDATION_ERROR';
}

export class FileNotUsable extends AppError {
  override name = 'FileNotUsable';
  readonly statusCode = 400;
  readonly code = 'FILE_NOT_USABLE';
}

export class Unauthenticated extends AppError {
  override name = 'Unauthenticated';
  readonly statusCode = 401;
  readonly code = 'UNAUTHENTICATED';
  constructor(message = 'Authentication required') {
    super(message);
  }
}

export class MfaRequired extends AppError {
  override name = 'MfaRequired';
  readonly statusCode = 403;
  readonly code = 'MFA_REQUIRED';
  constructor(message = 'This session is locked: unlock it with a second factor') {
    super(message);
  }
}

export class Forbidden extends AppError {
  override name = 'Forbidden';
  readonly statusCode = 403;
  readonly code = 'FORBIDDEN';
}

export class NotFound extends AppError {
  override name = 'NotFound';
  readonly statusCode = 404;
  readonly code = 'NOT_FOUND';
}

export class VersionMismatch extends AppError {
  override name = 'VersionMismatch';
  readonly statusCode = 409;
  readonly code = 'VERSION_MISMATCH';
  constructor() {
    super('Version mismatch');
  }
}

/** A unique name taken by another record (user name, organization name). */
export class Conflict extends AppError {
  override name = 'Conflict';
  readonly statusCode = 409;
  readonly code = 'CONFLICT';
}

export class LimitExceeded extends AppError {
  override name = 'LimitExceeded';
  readonly statusCode = 413;
  readonly code = 'LIMIT_EXCEEDED';
}

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

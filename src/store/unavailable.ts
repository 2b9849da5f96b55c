/**
 * Whether an error means a store (the database, the blob store) could not be reached, dropped the
 * connection or said it is unavailable (a restart, a failover, a partition, S3 answering 5xx), rather
 * than that the request was wrong: such a request can be retried, so it is answered 503 with
 * Retry-After, never 500.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message, $metadata } = error as {
    code?: unknown;
    message?: unknown;
    $metadata?: { httpStatusCode?: unknown };
  };
  // The AWS SDK's service errors carry the answer's status: 500 InternalError, 503 SlowDown.
  if (typeof $metadata?.httpStatusCode === 'number' && $metadata.httpStatusCode >= 500) return true;
  if (typeof code === 'string') {
    // SQLSTATE class 08 (connection exception); 57P01–57P03: the server is shutting down, crashed or
    // is not accepting connections yet.
    // 57014: a statement cancelled by the statement time-out (an overloaded server).
    if (/^08[0-9A-Z]{3}$/.test(code) || ['57014', '57P01', '57P02', '57P03'].includes(code)) return true;
    if (SOCKET_ERRORS.has(code)) return true;
  }
  return typeof message === 'string' && PG_CONNECTION_MESSAGES.some((m) => message.includes(m));
}

const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

// pg reports a lost or unobtainable connection with these messages and no code.
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
];

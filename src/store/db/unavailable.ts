/**
 * Whether an error means the database could not be reached or dropped the connection (a restart, a
 * failover, a partition), rather than that the request was wrong: such a request can be retried, so
 * it is answered 503 with Retry-After, never 500.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    // SQLSTATE class 08 (connection exception); 57P01–57P03: the server is shutting down, crashed or
    // is not accepting connections yet.
    if (/^08[0-9A-Z]{3}$/.test(code) || ['57P01', '57P02', '57P03'].includes(code)) return true;
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

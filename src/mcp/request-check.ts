import {
  ClientRequestSchema,
  ErrorCode,
  type JSONRPCErrorResponse,
} from '@modelcontextprotocol/sdk/types.js';

/** The schema of each request a client may send, by method (the SDK's own, of the protocol version it speaks). */
const REQUESTS = new Map(
  ClientRequestSchema.options.map((schema) => [schema.shape.method.value as string, schema] as const),
);

/**
 * A JSON-RPC request whose params do not fit its method, answered as what it is: `-32602 Invalid params`
 * with the member that is wrong, for the model or the client's developer to correct. Left to the SDK, the
 * same message fails its own parse inside the handler and comes back as `-32603 Internal error` with the
 * parser's dump: a server fault, to a client that sent something wrong. Undefined for a request that
 * fits, a method the server does not know (the SDK answers -32601) and anything that is not a request.
 */
export function invalidParams(message: unknown): JSONRPCErrorResponse | undefined {
  if (typeof message !== 'object' || message === null || !('id' in message) || !('method' in message))
    return undefined;
  const { id, method } = message;
  const schema = typeof method === 'string' ? REQUESTS.get(method) : undefined;
  if (!schema || (typeof id !== 'string' && typeof id !== 'number')) return undefined;
  const parsed = schema.safeParse(message);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0]!;
  const where = issue.path
    .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
    .join('');
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: ErrorCode.InvalidParams,
      message: `Invalid params: ${where.replace(/^\./, '') || 'params'} ${wording(issue.message)}`,
    },
  };
}

/** "Invalid input: expected string, received number" → "must be a string, not a number"; received nothing → "is missing". */
function wording(message: string): string {
  const expected = /expected (\w+), received (\w+)/.exec(message);
  if (expected?.[2] === 'undefined') return 'is missing';
  if (expected) return `must be ${article(expected[1]!)}, not ${article(expected[2]!)}`;
  return message.replace(/^Invalid input: ?/, '').toLowerCase() || 'is not valid';
}

function article(type: string): string {
  const word = type === 'record' ? 'object' : type;
  return word === 'null' ? 'null' : `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`;
}

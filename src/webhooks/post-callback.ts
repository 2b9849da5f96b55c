import { request } from 'node:http';
import { request as requestTls } from 'node:https';
import { performance } from 'node:perf_hooks';
import { CallbackRefused, checkCallbackUrl, type CallbackPolicy, type GuardedAgents } from './ssrf-guard.js';

/** Contract: "10 s timeout" — for the whole exchange, answer body included. */
export const DELIVERY_TIMEOUT_MS = 10_000;
// Enough of an answer to keep the connection reusable; a receiver should answer with little.
const MAX_ANSWER_BYTES = 64 * 1024;
/** How much of an answer the deliveries list shows (`responseExcerpt`). */
export const RESPONSE_EXCERPT_BYTES = 256;

/** How webhook requests leave: the SSRF policy, and the pinned keep-alive agents (ssrf-guard.ts). */
export interface DeliveryTransport {
  policy: CallbackPolicy;
  agents: GuardedAgents;
}

/** One attempt's outcome, as the deliveries list shows it. */
export interface AttemptResult {
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  success: boolean;
  /** The first RESPONSE_EXCERPT_BYTES of the answer's body as text; null without an answer. */
  responseExcerpt: string | null;
}

class Timeout extends Error {
  override name = 'TimeoutError';
}

/**
 * POSTs `body` to a callback URL through the guarded agents (node:http rather than fetch: a
 * fraction of the CPU per request). Never throws: a refusal, an error or a non-2xx answer is an
 * unsuccessful attempt, described without the URL or a secret. Redirects are not followed: the
 * guard checked this URL's host, not wherever a redirect might point.
 *
 * ```ts
 * const result = await postCallback(url, transport, body, { 'content-type': 'application/json' });
 * ```
 */
export async function postCallback(
  url: string,
  transport: DeliveryTransport,
  body: string,
  headers: Record<string, string>,
): Promise<AttemptResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  try {
    // Checked at every attempt, not only at creation: DNS answers change (Contract: SSRF).
    await checkCallbackUrl(url, transport.policy);
    const { statusCode, excerpt } = await exchange(new URL(url), transport.agents, body, headers);
    const success = statusCode >= 200 && statusCode < 300;
    return {
      statusCode,
      latencyMs: latency(),
      success,
      responseExcerpt: excerptText(excerpt),
      error: success
        ? null
        : `the receiver answered ${statusCode}${statusCode >= 300 && statusCode < 400 ? ' (redirects are not followed)' : ''}`,
    };
  } catch (error) {
    return {
      statusCode: null,
      latencyMs: latency(),
      success: false,
      error: describe(error),
      responseExcerpt: null,
    };
  }
}

/**
 * Sends the request and reads the answer (up to MAX_ANSWER_BYTES, of which only the first
 * RESPONSE_EXCERPT_BYTES are kept); resolves with its status and those first bytes.
 */
function exchange(
  url: URL,
  agents: GuardedAgents,
  body: string,
  headers: Record<string, string>,
): Promise<{ statusCode: number; excerpt: Buffer }> {
  const payload = Buffer.from(body, 'utf8');
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? requestTls : request;
    const outgoing = send(url, {
      method: 'POST',
      agent: agents.agentFor(url),
      headers: { ...headers, 'content-length': String(payload.byteLength) },
    });
    // The first outcome counts; later ones (the errors of a destroyed connection) change nothing.
    const settle = (error: Error | undefined, statusCode = 0, excerpt: Buffer = Buffer.alloc(0)) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve({ statusCode, excerpt });
    };
    const timer = setTimeout(() => {
      settle(new Timeout(`no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`));
      outgoing.destroy();
    }, DELIVERY_TIMEOUT_MS);
    outgoing.on('error', (error) => settle(error));
    outgoing.on('response', (answer) => {
      const status = answer.statusCode ?? 0;
      let read = 0;
      const kept: Buffer[] = [];
      const excerpt = () => Buffer.concat(kept);
      answer.on('data', (chunk: Buffer) => {
        // A copy: a slice would hold on to the whole chunk.
        if (read < RESPONSE_EXCERPT_BYTES)
          kept.push(Buffer.from(chunk.subarray(0, RESPONSE_EXCERPT_BYTES - read)));
        read += chunk.byteLength;
        // The status is known: a longer answer is cut off with its connection.
        if (read > MAX_ANSWER_BYTES) {
          answer.destroy();
          settle(undefined, status, excerpt());
        }
      });
      answer.on('end', () => settle(undefined, status, excerpt()));
      answer.on('error', (error) => settle(error));
      answer.on('close', () => settle(new Error('the answer was cut off')));
    });
    outgoing.end(payload);
  });
}

/**
 * The excerpt as text: UTF-8, an invalid sequence replaced by U+FFFD, a character cut in two at the
 * end left out, and NUL (which PostgreSQL text cannot hold) replaced too.
 */
function excerptText(bytes: Buffer): string {
  // `stream`: an incomplete sequence at the end is held back for more bytes that never come.
  return new TextDecoder('utf-8').decode(bytes, { stream: true }).replaceAll('\0', '\uFFFD');
}

/** Why an attempt got no answer, in words for the deliveries list; never the URL or a secret. */
function describe(error: unknown): string {
  if (error instanceof CallbackRefused) return `refused: ${error.message}`;
  if (error instanceof Timeout) return error.message;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return `could not reach the receiver (${code})`;
  return error instanceof Error ? `could not reach the receiver (${error.message})` : 'the request failed';
}

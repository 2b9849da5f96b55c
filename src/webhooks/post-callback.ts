import { request } from 'node:http';
import { request as requestTls } from 'node:https';
import { performance } from 'node:perf_hooks';
import { CallbackRefused, checkCallbackUrl, type CallbackPolicy, type GuardedAgents } from './ssrf-guard.js';

/** Contract: "10 s timeout" — for the whole exchange, answer body included. */
export const DELIVERY_TIMEOUT_MS = 10_000;
// Enough of an answer to keep the connection reusable; a receiver should answer with little.
const MAX_ANSWER_BYTES = 64 * 1024;

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
    const statusCode = await exchange(new URL(url), transport.agents, body, headers);
    const success = statusCode >= 200 && statusCode < 300;
    return {
      statusCode,
      latencyMs: latency(),
      success,
      error: success
        ? null
        : `the receiver answered ${statusCode}${statusCode >= 300 && statusCode < 400 ? ' (redirects are not followed)' : ''}`,
    };
  } catch (error) {
    return { statusCode: null, latencyMs: latency(), success: false, error: describe(error) };
  }
}

/** Sends the request and reads the answer (up to MAX_ANSWER_BYTES); resolves with its status. */
function exchange(
  url: URL,
  agents: GuardedAgents,
  body: string,
  headers: Record<string, string>,
): Promise<number> {
  const payload = Buffer.from(body, 'utf8');
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? requestTls : request;
    const outgoing = send(url, {
      method: 'POST',
      agent: agents.agentFor(url),
      headers: { ...headers, 'content-length': String(payload.byteLength) },
    });
    // The first outcome counts; later ones (the errors of a destroyed connection) change nothing.
    const settle = (error: Error | undefined, status?: number) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(status ?? 0);
    };
    const timer = setTimeout(() => {
      settle(new Timeout(`no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`));
      outgoing.destroy();
    }, DELIVERY_TIMEOUT_MS);
    outgoing.on('error', (error) => settle(error));
    outgoing.on('response', (answer) => {
      const status = answer.statusCode ?? 0;
      let read = 0;
      answer.on('data', (chunk: Buffer) => {
        read += chunk.byteLength;
        // The status is known: a longer answer is cut off with its connection.
        if (read > MAX_ANSWER_BYTES) {
          answer.destroy();
          settle(undefined, status);
        }
      });
      answer.on('end', () => settle(undefined, status));
      answer.on('error', (error) => settle(error));
      answer.on('close', () => settle(new Error('the answer was cut off')));
    });
    outgoing.end(payload);
  });
}

/** Why an attempt got no answer, in words for the deliveries list; never the URL or a secret. */
function describe(error: unknown): string {
  if (error instanceof CallbackRefused) return `refused: ${error.message}`;
  if (error instanceof Timeout) return error.message;
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return `could not reach the receiver (${code})`;
  return error instanceof Error ? `could not reach the receiver (${error.message})` : 'the request failed';
}

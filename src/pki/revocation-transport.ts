import type { Agent } from 'node:http';
import { request } from 'node:http';
import { request as requestTls } from 'node:https';

/** One revocation request: GET a CRL, or POST an OCSP request. Resolves with the answer's bytes. */
export type RevocationTransport = (
  url: string,
  options: { method: 'GET' | 'POST'; body?: Uint8Array; contentType?: string; timeoutMs: number },
) => Promise<Uint8Array>;

// A CRL of a large CA runs to megabytes; anything past this is not a revocation answer we want.
const MAX_ANSWER_BYTES = 20 * 1024 * 1024;

/**
 * Revocation requests over node:http(s) through the caller's guard: `check` refuses a URL before it is
 * asked (the webhooks' SSRF rules, unless configured otherwise), and `agentFor` gives connections pinned
 * to the addresses checked. The time-out covers the whole exchange; redirects are not followed (the
 * guard checked this URL, not wherever a redirect points); an answer other than 200 is an error.
 *
 * ```ts
 * const transport = httpRevocationTransport({ check: (url) => checkCallbackUrl(url, policy), agentFor: agents.agentFor });
 * const crl = await transport('http://crl.example/ca.crl', { method: 'GET', timeoutMs: 5000 });
 * ```
 */
/**
 * How a revocation fetch went, for the metrics: an OCSP request (POST) or a CRL download (GET), its
 * seconds, and whether it failed.
 */
export type RevocationObserver = (kind: 'ocsp' | 'crl', seconds: number, failed: boolean) => void;

/** `transport`, telling `observe` about each fetch. */
export function observedRevocationTransport(
  transport: RevocationTransport,
  observe: RevocationObserver,
): RevocationTransport {
  return async (url, options) => {
    const kind = options.method === 'POST' ? 'ocsp' : 'crl';
    const started = performance.now();
    try {
      const answer = await transport(url, options);
      observe(kind, (performance.now() - started) / 1000, false);
      return answer;
    } catch (error) {
      observe(kind, (performance.now() - started) / 1000, true);
      throw error;
    }
  };
}

export function httpRevocationTransport(guard: {
  check: (url: string) => Promise<unknown>;
  agentFor: (url: URL) => Agent;
}): RevocationTransport {
  return async (raw, options) => {
    const url = new URL(raw);
    await guard.check(raw);
    return new Promise<Uint8Array>((resolve, reject) => {
      const send = url.protocol === 'https:' ? requestTls : request;
      const outgoing = send(url, {
        method: options.method,
        agent: guard.agentFor(url),
        headers: options.body
          ? {
              'content-type': options.contentType ?? 'application/octet-stream',
              'content-length': options.body.byteLength,
            }
          : {},
      });
      const timer = setTimeout(() => {
        outgoing.destroy(new Error(`no answer within ${options.timeoutMs / 1000} s`));
      }, options.timeoutMs);
      const settle = (error: Error | undefined, bytes?: Uint8Array) => {
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(bytes ?? new Uint8Array());
      };
      outgoing.on('error', (error) => settle(error));
      outgoing.on('response', (answer) => {
        if (answer.statusCode !== 200) {
          answer.resume();
          settle(new Error(`the server answered HTTP ${answer.statusCode ?? '?'}`));
          return;
        }
        const chunks: Buffer[] = [];
        let read = 0;
        answer.on('data', (chunk: Buffer) => {
          read += chunk.byteLength;
          if (read > MAX_ANSWER_BYTES) {
            answer.destroy();
            settle(new Error('the answer is too large'));
            return;
          }
          chunks.push(chunk);
        });
        answer.on('end', () => settle(undefined, new Uint8Array(Buffer.concat(chunks))));
        answer.on('error', (error) => settle(error));
      });
      outgoing.end(options.body ? Buffer.from(options.body) : undefined);
    });
  };
}

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { digestOid, type DigestAlgorithm } from './algorithms.js';
import { bytesEqual, childAt, integerOf, originalBytes, parseDer, toDer } from './der.js';
import { TimestampUnavailable } from './errors.js';
import { readTimestampToken, type TimestampTokenInfo } from './timestamp-token.js';

export interface RequestTimestampOptions {
  /** The TSA's URL (TSA_URL). */
  url: string;
  /** Digest of what is timestamped: a signature value (B-T) or a document's byte ranges (B-LTA). */
  digest: Uint8Array;
  digestAlgorithm: DigestAlgorithm;
  /** Gives up after this long (default 10 s). */
  timeoutMs?: number;
  /** Extra request headers (a TSA that wants basic authentication). */
  headers?: Record<string, string>;
  /** Hears how the request went (the metrics of app.ts). */
  observe?: TsaObserver | undefined;
}

/**
 * Why a TSA request gave no token: `timeout` (no answer in time), `unreachable` (no connection),
 * `http` (a status other than 2xx), `refused` (a PKIStatus other than granted), `invalid` (an answer
 * that cannot be read, or a token that does not match our request).
 */
export type TsaFailure = 'timeout' | 'unreachable' | 'http' | 'refused' | 'invalid';

/** Hears each TSA request: how long it took, and why it failed (null when it gave a token). */
export type TsaObserver = (seconds: number, failure: TsaFailure | null) => void;

/** TimestampUnavailable, with why in one word for the observer. */
class TsaFailed extends TimestampUnavailable {
  constructor(
    readonly failure: TsaFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface TimestampResult {
  /** The TimeStampToken (CMS ContentInfo), as the TSA sent it. */
  token: Uint8Array;
  info: TimestampTokenInfo;
}

/**
 * An RFC 3161 client: POSTs an `application/timestamp-query` with a fresh nonce and asks for the TSA's
 * certificate, then checks the answer (status granted, same imprint and nonce, valid TSA signature)
 * before returning the token. Any failure is `TimestampUnavailable`; DESIGN: never fake a timestamp.
 *
 * ```ts
 * const { token, info } = await requestTimestamp({ url: config.tsaUrl, digest, digestAlgorithm: 'SHA-256' });
 * ```
 */
export async function requestTimestamp(options: RequestTimestampOptions): Promise<TimestampResult> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  try {
    const result = await exchange(options);
    options.observe?.(seconds(), null);
    return result;
  } catch (error) {
    options.observe?.(seconds(), error instanceof TsaFailed ? error.failure : 'invalid');
    throw error;
  }
}

async function exchange(options: RequestTimestampOptions): Promise<TimestampResult> {
  const nonce = randomBytes(8);
  nonce[0] = (nonce[0]! & 0x7f) | 0x01; // positive, and minimal in DER, so it compares byte for byte
  const request = new pkijs.TimeStampReq({
    version: 1,
    messageImprint: new pkijs.MessageImprint({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: digestOid(options.digestAlgorithm) }),
      hashedMessage: new asn1js.OctetString({ valueHex: options.digest }),
    }),
    nonce: new asn1js.Integer({ valueHex: nonce }),
    certReq: true,
  });
  const body = toDer(request.toSchema());
  const send = () =>
    fetch(options.url, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query', ...options.headers },
      body,
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
  let response: Response;
  try {
    // A kept-alive connection that the TSA closed just as it was reused fails the request before the
    // TSA read it ("fetch failed"): sent once more on a new connection. Asking twice is harmless (a
    // token is checked against this request's imprint and nonce); a time-out is not retried.
    response = await send().catch((error: unknown) => {
      if (error instanceof Error && error.name === 'TimeoutError') throw error;
      return send();
    });
  } catch (error) {
    throw new TsaFailed(
      error instanceof Error && error.name === 'TimeoutError' ? 'timeout' : 'unreachable',
      `The time-stamp authority cannot be reached (${describe(error)})`,
    );
  }
  if (!response.ok) throw new TsaFailed('http', `The time-stamp authority answered HTTP ${response.status}`);
  const answer = new Uint8Array(await response.arrayBuffer());
  let token: Uint8Array;
  let info: TimestampTokenInfo;
  try {
    const resp = parseDer(answer, 'TimeStampResp');
    const status = integerOf(childAt(childAt(resp, 0, 'status'), 0, 'status'), 'status');
    // PKIStatus 0 granted, 1 grantedWithMods; anything else carries no token.
    if (status !== 0 && status !== 1)
      throw new TsaFailed('refused', `The time-stamp authority refused (status ${status})`);
    token = originalBytes(childAt(resp, 1, 'timeStampToken'));
    info = readTimestampToken({ token });
  } catch (error) {
    if (error instanceof TsaFailed) throw error;
    throw new TsaFailed('invalid', `The time-stamp authority's answer cannot be read (${describe(error)})`);
  }
  if (!info.valid)
    throw new TsaFailed('invalid', `The timestamp token is not valid: ${info.problems.join('; ')}`);
  if (!bytesEqual(info.hashedMessage, options.digest) || info.hashAlgorithm !== options.digestAlgorithm) {
    throw new TsaFailed('invalid', 'The timestamp token covers another message imprint');
  }
  if (info.nonce !== nonce.toString('hex')) {
    throw new TsaFailed('invalid', 'The timestamp token does not echo our nonce');
  }
  return { token, info };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message.slice(0, 200) : 'unknown error';
}

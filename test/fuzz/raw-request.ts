import { request as httpRequest } from 'node:http';

/**
 * One HTTP request sent byte for byte as given (node:http, not fetch: fetch would repair a bad
 * percent-encoding, refuse a body on some methods and always add a multipart boundary).
 */
export interface RawRequest {
  method: string;
  /** Path and query exactly as they go on the request line. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export class NoAnswer extends Error {}

/** Sends `request` to `baseUrl`; fails with NoAnswer when nothing comes back within `timeoutMs`. */
export function send(baseUrl: string, request: RawRequest, timeoutMs: number): Promise<RawResponse> {
  const base = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const call = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        method: request.method,
        path: request.path,
        headers: {
          ...(request.body ? { 'content-length': String(request.body.length) } : {}),
          ...request.headers,
        },
        agent: false,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          clearTimeout(timer);
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
        response.on('error', fail);
      },
    );
    const timer = setTimeout(() => {
      call.destroy();
      reject(new NoAnswer(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    function fail(error: Error) {
      clearTimeout(timer);
      reject(error);
    }
    call.on('error', fail);
    call.end(request.body);
  });
}

import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  // Tests read arbitrary fields of JSON answers.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

/**
 * Sends bytes as they are over a socket to the server at `url` and reads the answer until the server
 * closes the connection: for requests fetch cannot send (a bad Content-Length, a malformed URL, a
 * header over the limit, something that is not HTTP). Send `Connection: close` on well-formed ones.
 */
export function rawHttp(url: string, request: string | Buffer): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      // The server may reset the connection after answering a request it refused.
      if (error.code === 'ECONNRESET' && chunks.length > 0) return;
      reject(error);
    });
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('latin1');
      const split = raw.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no HTTP answer: ${JSON.stringify(raw.slice(0, 200))}`));
      const [statusLine = '', ...headerLines] = raw.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const text = Buffer.from(raw.slice(split + 4), 'latin1').toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, text, body });
    });
    // Not end(): a half-closed connection makes the server drop a request still being read.
    socket.write(request);
  });
}

import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A reverse proxy on a loopback port, standing for the one in front of the server (PUBLIC_URL). */
export interface TestProxy {
  /** PUBLIC_URL: `http://127.0.0.1:<port>`. */
  url: string;
  /** Where requests go (the test server, once it listens). */
  target: string | undefined;
  close: () => Promise<void>;
}

/**
 * PUBLIC_URL must be known before the server starts (the identity provider registers its callback
 * under it, and the server is told the provider's address), while the test server only learns its
 * port when it listens: the proxy listens first, and is pointed at the server afterwards.
 */
export async function startProxy(): Promise<TestProxy> {
  const proxy: TestProxy = { url: '', target: undefined, close: async () => undefined };
  const server = createServer((req, res) => {
    if (!proxy.target) {
      res.writeHead(503).end();
      return;
    }
    const target = new URL(proxy.target);
    const upstream = request(
      {
        hostname: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((error) => (error ? reject(error) : resolve()));
    });
  return proxy;
}

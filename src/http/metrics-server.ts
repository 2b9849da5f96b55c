import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { errorBody } from './error-handler.js';

/** A listening metrics endpoint: where it is, and how to stop it. */
export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * GET /metrics of `registry` on a port of its own (METRICS_PORT): what `signery worker`, which serves
 * no API, offers Prometheus. Nothing else is served there; anything else is the Contract's 404 (405
 * for another method on /metrics).
 *
 * ```ts
 * const metrics = await serveMetrics(app.deps.metrics.registry, { port: 9464, host: '0.0.0.0' });
 * …
 * await metrics.close();
 * ```
 */
export async function serveMetrics(
  registry: Registry,
  options: { port: number; host: string },
): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    const answer = (status: number, type: string, body: string) =>
      response.writeHead(status, { 'content-type': type }).end(body);
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics')
      return answer(404, 'application/json', JSON.stringify(errorBody(404, 'Only /metrics is served here')));
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return answer(405, 'application/json', JSON.stringify(errorBody(405, 'GET /metrics')));
    registry.metrics().then(
      (text) => answer(200, registry.contentType, text),
      () => answer(500, 'application/json', JSON.stringify(errorBody(500, 'The metrics could not be read'))),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

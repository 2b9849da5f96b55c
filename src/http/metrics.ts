import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * Request counts and latency histograms per route into `registry`, which GET /metrics serves
 * (Prometheus text format; docs/operations.md: Metrics and alerts).
 */
export function registerMetrics(app: FastifyInstance, registry: Registry): void {
  const labelNames = ['method', 'route', 'status_code'] as const;
  const requests = new Counter({
    name: 'signery_http_requests_total',
    help: 'HTTP requests answered, by route template and status',
    labelNames,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'signery_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by route template',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    // The route template, never the concrete URL: ids and tokens must not become label values.
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status_code: String(reply.statusCode),
    };
    requests.inc(labels);
    latency.observe(labels, reply.elapsedTime / 1000);
  });
  // Answers during a database outage too: the queue's gauges are then left out (metrics.ts).
  const route = { config: { auth: 'none' as const, rateLimit: false }, schema: { hide: true } };
  app.get('/metrics', route, async (_request, reply) => {
    void reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
}

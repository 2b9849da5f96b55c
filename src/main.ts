import { buildApp, type App } from './app.js';
import { ConfigError, loadConfig, type Config } from './base/config.js';
import { serveMetrics, type MetricsServer } from './http/metrics-server.js';

/**
 * `npm start` / `signery serve`: configuration → app → listen (and GET /metrics on METRICS_PORT too,
 * when set); SIGTERM/SIGINT drain and stop.
 */
export async function serve(): Promise<void> {
  const config = loadConfig();
  const app = await buildApp(config);
  const metrics = await metricsPort(app, config);
  stopOnSignals(app, metrics);
  await app.server.listen({ port: config.port, host: config.host });
}

/**
 * `signery worker`: a node that runs the job worker only (webhook delivery, mail, reminders) and
 * serves no API, beside API nodes started with JOB_WORKER=false; with METRICS_PORT it serves GET
 * /metrics there (its deliveries, time-stamps and jobs are counted in this process). SIGTERM/SIGINT
 * let the jobs running finish.
 */
export async function work(): Promise<void> {
  const config = loadConfig();
  const app = await buildApp(config, { worker: {} });
  const metrics = await metricsPort(app, config);
  // The worker's timers do not hold a process open (see Worker); this node lives until a signal.
  setInterval(() => undefined, 2 ** 30);
  stopOnSignals(app, metrics);
  app.server.log.info({ workerId: app.worker?.id }, 'job worker started (no HTTP)');
}

async function metricsPort(app: App, config: Config): Promise<MetricsServer | undefined> {
  if (config.metricsPort === undefined) return undefined;
  try {
    const metrics = await serveMetrics(app.deps.metrics.registry, {
      port: config.metricsPort,
      host: config.host,
    });
    app.server.log.info({ metricsUrl: metrics.url }, 'serving metrics on METRICS_PORT');
    return metrics;
  } catch (error) {
    await app.close();
    throw error;
  }
}

function stopOnSignals(app: App, metrics: MetricsServer | undefined): void {
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const drainMs = app.deps.config.shutdownDrainSeconds * 1000;
    app.server.log.info(
      { signal, drainSeconds: app.deps.config.shutdownDrainSeconds },
      'shutting down: no new connections; finishing requests in flight',
    );
    const force = setTimeout(() => process.exit(1), drainMs + 30_000);
    force.unref();
    app
      .drain(drainMs)
      .then(() => Promise.all([app.close(), metrics?.close()]))
      .then(
        () => process.exit(0),
        (error: unknown) => {
          app.server.log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}

// Runs when started as `node dist/main.js` (npm start), not when the CLI imports `serve`.
if (/[\\/]main\.(js|ts)$/.test(process.argv[1] ?? '')) {
  serve().catch((error: unknown) => {
    console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
    process.exit(1);
  });
}

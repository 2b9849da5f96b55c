import { buildApp, type App } from './app.js';
import { ConfigError, loadConfig, type Config } from './base/config.js';
import { serveMetrics, type MetricsServer } from './http/metrics-server.js';
import { startReport } from './start-report.js';

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
  tellStart(app, config, true);
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
  tellStart(app, config, false);
}

/** The few lines a person reads at a start (start-report.ts). */
function tellStart(app: App, config: Config, serving: boolean): void {
  const node = { serving, worker: app.worker !== undefined, adminCreated: app.adminCreated };
  for (const { level, message } of startReport(config, node)) app.server.log[level](message);
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

/** Serves, or says why it cannot and exits 1: `node dist/main.js` and `npm start` (scripts/start.mjs). */
export function main(): void {
  serve().catch((error: unknown) => {
    console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
    process.exit(1);
  });
}

// Runs when started as `node dist/main.js`, not when the CLI or scripts/start.mjs imports it.
if (/[\\/]main\.(js|ts)$/.test(process.argv[1] ?? '')) main();

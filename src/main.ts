import { buildApp, type App } from './app.js';
import { ConfigError, loadConfig } from './config.js';

/** `npm start` / `signery serve`: configuration → app → listen; SIGTERM/SIGINT drain and stop. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  const app = await buildApp(config);
  stopOnSignals(app);
  await app.server.listen({ port: config.port, host: config.host });
}

/**
 * `signery worker`: a node that runs the job worker only (webhook delivery, mail, reminders) and
 * serves no HTTP, beside API nodes started with JOB_WORKER=false. SIGTERM/SIGINT let the jobs
 * running finish.
 */
export async function work(): Promise<void> {
  const app = await buildApp(loadConfig(), { worker: {} });
  // The worker's timers do not hold a process open (see Worker); this node lives until a signal.
  setInterval(() => undefined, 2 ** 30);
  stopOnSignals(app);
  app.server.log.info({ workerId: app.worker?.id }, 'job worker started (no HTTP)');
}

function stopOnSignals(app: App): void {
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
      .then(() => app.close())
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

import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';

/** `npm start` / `signery serve`: configuration → app → listen; SIGTERM/SIGINT drain and stop. */
export async function serve(): Promise<void> {
  const config = loadConfig();
  const app = await buildApp(config);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.server.log.info({ signal }, 'shutting down: finishing requests in flight');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.server.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  await app.server.listen({ port: config.port, host: config.host });
}

// Runs when started as `node dist/main.js` (npm start), not when the CLI imports `serve`.
if (/[\\/]main\.(js|ts)$/.test(process.argv[1] ?? '')) {
  serve().catch((error: unknown) => {
    console.error(error instanceof ConfigError ? `Configuration error: ${error.message}` : error);
    process.exit(1);
  });
}

import { readdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { cpuPinning, installExitHandlers, runCleanups } from './processes.js';
import { ensureBuilt, startServer, type RunningServer } from './server.js';

/**
 * The built server (SQLite, a fresh data directory, on CPU 0 when it can be pinned) and Debian's
 * chromium, for the scripts that drive the page (bench:page, npm run screenshots): `run` gets both,
 * and both are stopped however it ends. A failure prints its message and exits 1.
 */
export function withServerAndBrowser(
  root: string,
  run: (server: RunningServer & { dataDir: string }, browser: Browser) => Promise<void>,
  options: { rebuild?: boolean } = {},
): void {
  installExitHandlers();
  const main = async () => {
    await ensureBuilt(root, options.rebuild ?? false);
    const server = await startServer({
      root,
      placement: cpuPinning(false).server,
      logLevel: 'warn',
      databaseUrl: undefined,
      databaseSchema: undefined,
    });
    try {
      const browser = await chromium.launch({
        executablePath: '/usr/bin/chromium',
        headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
      try {
        await run({ ...server, dataDir: dirname(server.logFile) }, browser);
      } finally {
        await browser.close();
      }
    } finally {
      await server.stop();
      await runCleanups();
    }
  };
  main().catch(async (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    await runCleanups();
    process.exit(1);
  });
}

/**
 * The share-link token in the newest invitation to `to` the server wrote under DATA_DIR/mail (no
 * SMTP_URL: one .eml file per message), waiting up to ten seconds for it.
 */
export async function invitationLink(dataDir: string, to: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const names = (await readdir(join(dataDir, 'mail')).catch(() => [] as string[])).sort().reverse();
    for (const name of names) {
      const mail = (await readFile(join(dataDir, 'mail', name), 'utf8')).replace(/=\r?\n/g, '');
      const token = /\/s\/(shr_[A-Za-z0-9_-]{43})/.exec(mail)?.[1];
      if (token && mail.includes(`To: ${to}`)) return token;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no invitation to ${to} was written`);
}

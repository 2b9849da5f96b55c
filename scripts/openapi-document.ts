import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/base/config.js';

/**
 * The OpenAPI document this checkout serves at /api/v1/openapi.json, built by a server over an empty
 * SQLite data directory that never listens (so no port, PostgreSQL or network is needed).
 */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const dataDir = await mkdtemp(join(tmpdir(), 'signery-openapi-'));
  try {
    const app = await buildApp(loadConfig({ DATA_DIR: dataDir }), { logger: false, worker: false });
    try {
      await app.server.ready();
      return app.server.swagger() as unknown as Record<string, unknown>;
    } finally {
      await app.close();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** `tsx scripts/openapi-document.ts [file]`: writes the document (JSON) to `file`, or to stdout. */
async function main(): Promise<void> {
  const json = `${JSON.stringify(await openApiDocument(), null, 2)}\n`;
  const file = process.argv[2];
  if (file) await writeFile(file, json);
  else process.stdout.write(json);
}

if (process.argv[1] === import.meta.filename) await main();

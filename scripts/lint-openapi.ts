import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openApiDocument } from './openapi-document.js';

/**
 * `npm run lint:openapi`: the OpenAPI document this checkout serves, checked by Spectral
 * (`.spectral.yaml`, spectral:oas) and Redocly (`redocly.yaml`, recommended). Errors fail; warnings
 * are printed. Needs no running server or PostgreSQL.
 */
const root = join(import.meta.dirname, '..');
const dir = await mkdtemp(join(tmpdir(), 'signery-openapi-lint-'));
try {
  const file = join(dir, 'openapi.json');
  await writeFile(file, JSON.stringify(await openApiDocument(), null, 2));
  const bin = (name: string) => join(root, 'node_modules', '.bin', name);
  const run = (command: string, args: string[]) =>
    spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, NO_COLOR: '1' } })
      .status ?? 1;
  const spectral = run(bin('spectral'), [
    'lint',
    file,
    '--ruleset',
    '.spectral.yaml',
    '--fail-severity',
    'error',
  ]);
  const redocly = run(bin('redocly'), ['lint', file, '--config', 'redocly.yaml', '--max-problems', '1000']);
  process.exitCode = spectral === 0 && redocly === 0 ? 0 : 1;
} finally {
  await rm(dir, { recursive: true, force: true });
}

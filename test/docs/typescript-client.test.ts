import assert from 'node:assert/strict';
import { copyFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { OpenAPI3 } from 'openapi-typescript';
import { clientSchemaFrom, SCHEMA_FILE } from '../../clients/typescript/scripts/generate-schema.js';
import { aFreshProject, CLIENT_DIR, installClientFromTarball, run } from '../helpers/client-package.js';
import { useServer } from '../helpers/use-server.js';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * Issue 25: "A typed TypeScript client generated from the OpenAPI description … CI fails when the
 * description and the client disagree." The checked-in types (clients/typescript/src/schema.d.ts)
 * are generated again from what a real server answers at /api/v1/openapi.json, and must be the same.
 */
describe('the typed TypeScript client (clients/typescript)', () => {
  const server = useServer();

  it('its types are those of the server’s OpenAPI description, as `npm run client:generate` writes them', async () => {
    const description = (await server.api('GET', '/openapi.json')).body as OpenAPI3;
    const generated = (await clientSchemaFrom(description)).split('\n');
    const checkedIn = (await readFile(SCHEMA_FILE, 'utf8')).split('\n');
    const line = generated.findIndex((text, i) => text !== checkedIn[i]);
    const differs = line >= 0 || generated.length !== checkedIn.length;
    assert.ok(
      !differs,
      `clients/typescript/src/schema.d.ts no longer matches the API (first difference at line ${line + 1}: ` +
        `${JSON.stringify(checkedIn[line])} where the description gives ${JSON.stringify(generated[line])}); ` +
        'run `npm run client:generate` and commit the result',
    );
  });
});

/**
 * Issue 41: "The client installs as documented (from the repository path or a packed tarball into a
 * fresh project), is versioned with the server, and its README example runs as written." The
 * installation from the repository's path is what the integration guide's walkthrough test does
 * (test/docs/integration-guide-walkthrough.test.ts); this one packs.
 */
describe('the typed client as its README says to install and use it', () => {
  const server = useServer();
  let project: { dir: string; remove: () => Promise<void> };
  before(async () => {
    project = await aFreshProject('client-readme');
  });
  after(async () => {
    await project.remove();
  });

  it('is versioned with the server: its package.json carries the version of the repository’s', async () => {
    const version = async (dir: string) =>
      (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
    assert.equal(
      await version(CLIENT_DIR),
      await version(ROOT),
      'run `npm version <version>` in the repository',
    );
  });

  it('packs with its built code and types, and runs the README’s example against a server, type-checked', async () => {
    const tarball = await installClientFromTarball(project.dir);
    const installed = join(project.dir, 'node_modules', '@signery', 'client');
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
      version: string;
      dependencies: Record<string, string>;
    };
    assert.equal(tarball, `signery-client-${manifest.version}.tgz`);
    assert.deepEqual(Object.keys(manifest.dependencies), ['openapi-fetch'], 'its runtime dependency');

    const readme = await readFile(join(CLIENT_DIR, 'README.md'), 'utf8');
    const example = /^## Use\n[\s\S]*?```ts\n([\s\S]*?)\n```/m.exec(readme)?.[1];
    assert.ok(example, 'the README’s "Use" section has a TypeScript block');
    await writeFile(join(project.dir, 'example.ts'), example);
    await copyFile(join(ROOT, 'docs', 'examples', 'contract.pdf'), join(project.dir, 'contract.pdf'));
    // Checked against the installed package's types (dist/*.d.ts), with Node's types of the repository.
    await writeFile(
      join(project.dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2022', 'DOM'],
          module: 'NodeNext',
          strict: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: true,
          noEmit: true,
          typeRoots: [join(ROOT, 'node_modules', '@types')],
          types: ['node'],
        },
        files: ['example.ts'],
      }),
    );
    const typecheck = await run(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'],
      {
        cwd: project.dir,
      },
    );
    assert.equal(typecheck.code, 0, `tsc:\n${typecheck.output}`);

    const token = await server.adminToken();
    const key = await server.api('POST', '/api/key', { token, body: { description: 'README example' } });
    assert.equal(key.status, 200, key.text);
    const { code, output } = await run(
      process.execPath,
      ['--import', import.meta.resolve('tsx'), 'example.ts'],
      {
        cwd: project.dir,
        env: { SIGNERY_URL: server.url, SIGNERY_KEY: key.body.id as string },
      },
    );
    assert.equal(code, 0, `the example stopped (exit ${code}):\n${output}`);
    const [, documentId, bytes] = /document (\S+): its PDF has (\d+) bytes/.exec(output) ?? [];
    assert.ok(documentId, output);
    const pdf = await readFile(join(ROOT, 'docs', 'examples', 'contract.pdf'));
    assert.equal(Number(bytes), pdf.length, 'the file downloaded is the one uploaded');
    const document = await server.api('GET', `/documents/${documentId}`, { token });
    assert.equal(document.body.results[0].documentTitle, 'Service agreement');
  });
});

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { makeStore, type TestStore } from '../helpers/server.js';
import { serverEnv, type ServerProcess } from '../webhooks/processes.js';

const SOFTHSM = ['/usr/lib/softhsm/libsofthsm2.so', '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so'].find(
  (path) => existsSync(path),
);

/** `npm run dev`'s process (src/main.ts), with the module hooks of test/watch-modules.mjs. */
async function startWatched(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './test/watch-modules.mjs', 'src/main.ts'],
    { env, stdio: 'pipe' },
  );
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      // The start's own lines follow the listening ones.
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1] && /Mail (is sent|is not sent)/.test(output)) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${output}`)));
  });
  return {
    url,
    child,
    output: () => output,
    async stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** Runs the server until it exits by itself (a refused start): its exit code and output. */
async function failedStart(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--import', './test/watch-modules.mjs', 'src/main.ts'],
    { env, stdio: 'pipe' },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}

/** The JSON log lines of a process's output. */
function logLines(output: string): { level: number; msg: string }[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string });
}

const WARN = 40;

async function loadedPackages(log: string): Promise<string> {
  return existsSync(log) ? readFile(log, 'utf8') : '';
}

describe('a start says what a person needs, and loads no more than the configuration needs', () => {
  const stores: TestStore[] = [];
  const servers: ServerProcess[] = [];
  after(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    for (const store of stores) await store.remove();
  });

  it('the first start in development says the URL, that mail is written as files (where), WARNS of the development seal certificate and says the administrator was created; a restart does not create it again', async () => {
    const store = await makeStore('start-log');
    stores.push(store);
    const first = await startWatched(serverEnv({ ...store.env, PUBLIC_URL: 'http://signery.test:8080' }));
    servers.push(first);
    await first.stop('SIGTERM');
    const lines = logLines(first.output());
    const said = (pattern: RegExp) => lines.find((line) => pattern.test(line.msg));

    assert.ok(
      said(/^Signery is ready at http:\/\/signery\.test:8080 \(API: http:\/\/signery\.test:8080\/api\/v1, /),
      first.output(),
    );
    const mail = said(/^Mail is not sent/);
    assert.ok(mail?.msg.includes(join(store.dataDir, 'mail')), first.output());
    const seal = said(/^WARNING: documents are sealed with a development certificate/);
    assert.equal(seal?.level, WARN, first.output());
    assert.ok(
      said(/^Created the administrator admin@example\.test: log in with ADMIN_PASSWORD$/),
      first.output(),
    );
    assert.ok(!first.output().includes('admin-password-1'), 'the password is never logged');

    const again = await startWatched(serverEnv({ ...store.env }));
    servers.push(again);
    await again.stop('SIGTERM');
    assert.equal(
      logLines(again.output()).some((line) => /^Created the administrator/.test(line.msg)),
      false,
      'the administrator exists already',
    );
  });

  it('a start with no token configured loads neither the HSM library (graphene-pk11) nor the page-preview stack (pdf.js, @napi-rs/canvas, loaded by the first preview)', async () => {
    const store = await makeStore('light-start');
    stores.push(store);
    const log = join(store.dataDir, 'modules.log');
    const server = await startWatched(serverEnv({ ...store.env, SIGNERY_TEST_MODULE_LOG: log }));
    servers.push(server);
    const health = await fetch(`${server.url}/healthz`);
    assert.equal(health.status, 200);
    await server.stop('SIGTERM');
    const loaded = await loadedPackages(log);
    assert.match(loaded, /\/node_modules\/fastify\//, 'the hooks saw the packages the start loads');
    assert.doesNotMatch(loaded, /\/node_modules\/graphene-pk11\//);
    assert.doesNotMatch(loaded, /\/node_modules\/pdfjs-dist\//);
    assert.doesNotMatch(loaded, /\/node_modules\/@napi-rs\/canvas/);
  });

  it(
    'with SEAL_PKCS11_MODULE set, graphene-pk11 is loaded at the start; with SMTP_URL, mail goes to that server (named without its credentials) and no development-seal warning is given',
    { skip: SOFTHSM ? false : 'softhsm2 is not installed (apt-get install softhsm2)' },
    async () => {
      const store = await makeStore('hsm-start');
      stores.push(store);
      const log = join(store.dataDir, 'modules.log');
      const server = await startWatched(
        serverEnv({
          ...store.env,
          SIGNERY_TEST_MODULE_LOG: log,
          SEAL_PKCS11_MODULE: SOFTHSM!,
          SEAL_PKCS11_PIN: '1234',
          SMTP_URL: 'smtp://mailer:smtp-secret-1@127.0.0.1:2525',
        }),
      );
      servers.push(server);
      await server.stop('SIGTERM');
      assert.match(await loadedPackages(log), /\/node_modules\/graphene-pk11\//);
      const lines = logLines(server.output());
      assert.ok(
        lines.some((line) => line.msg === 'Mail is sent through the SMTP server 127.0.0.1:2525'),
        server.output(),
      );
      assert.ok(!server.output().includes('smtp-secret-1'), 'SMTP credentials are never logged');
      assert.equal(
        lines.some((line) => /development certificate/.test(line.msg)),
        false,
      );
    },
  );

  it('SEAL_PKCS11_MODULE set but graphene-pk11 not installed (npm install --omit=optional): the start is refused with a message that says what to install', async () => {
    const store = await makeStore('no-graphene');
    stores.push(store);
    const { code, output } = await failedStart(
      serverEnv({
        ...store.env,
        SIGNERY_TEST_HIDE_PACKAGE: 'graphene-pk11',
        SEAL_PKCS11_MODULE: SOFTHSM ?? '/usr/lib/softhsm/libsofthsm2.so',
      }),
    );
    assert.equal(code, 1, output);
    assert.match(
      output,
      /Configuration error: SEAL_PKCS11_MODULE is set, but .*graphene-pk11 .* is not installed: run `npm install graphene-pk11`/,
    );
    assert.doesNotMatch(output, /\n\s+at /, 'a message, not a stack trace');
  });
});

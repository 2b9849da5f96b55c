import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { installClientFromPath } from '../helpers/client-package.js';
import { freePort } from '../helpers/free-port.js';
import type { TestServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

/**
 * Issue 25: "README: an end-to-end walkthrough that works when pasted (log in → upload → create →
 * share for signing → the recipient signs → webhook → download the signed PDF → verify it) … also
 * written with the typed client … The walkthrough run in CI as a test, and the generated client
 * type-checked against the server's answers."
 *
 * The walkthrough lives in docs/integration-guide.md since the README became a front door (issue 39,
 * item 5). Its blocks marked `<!-- walkthrough: … -->` are the test: the server is started with the
 * environment its `server` block gives `npm start`, the `shell` blocks run as one bash script (as if
 * pasted into one terminal, stopping at the first failing command), and the `typescript` block is
 * saved in a project of its own with the client installed from the repository's path, as the guide
 * says, type-checked against it and run with every answer checked against the OpenAPI description. Each runs from a folder that looks like the repository's to it: `docs/` and the
 * server's `data/`.
 *
 * Issue 41: "A walkthrough that runs any number of times, cleaning up what it creates (its webhook)
 * and reading only its own mail." Each version runs twice against one server, from one folder, and
 * leaves no webhook behind.
 */

const ROOT = join(import.meta.dirname, '..', '..');

interface Walkthrough {
  /** The environment the guide starts the server with (`VAR=value … npm start`). */
  serverEnv: Record<string, string>;
  shell: string;
  typescript: string;
}

const GUIDE = join(ROOT, 'docs', 'integration-guide.md');

async function guideWalkthrough(): Promise<Walkthrough> {
  const guide = await readFile(GUIDE, 'utf8');
  const blocks = [...guide.matchAll(/<!-- walkthrough: (\w+) -->\s*```\w*\n([\s\S]*?)\n```/g)].map(
    ([, kind, code]) => ({ kind: kind as string, code: code as string }),
  );
  const of = (kind: string) => blocks.filter((b) => b.kind === kind).map((b) => b.code);
  const [start = ''] = of('server');
  assert.ok(start.includes('npm start'), 'the guide starts the server with npm start');
  const serverEnv = Object.fromEntries(
    [...start.split('npm start')[0]!.matchAll(/([A-Z_]+)=('[^']*'|\S+)/g)].map(([, name, value]) => [
      name as string,
      (value as string).replace(/^'|'$/g, ''),
    ]),
  );
  const [typescript] = of('typescript');
  assert.ok(of('shell').length >= 8 && typescript, 'the guide marks its walkthrough blocks');
  return { serverEnv, shell: of('shell').join('\n\n'), typescript };
}

interface Run {
  code: number | null;
  output: string;
}

/**
 * Runs a command to its end (at most three minutes), with its output (stdout and stderr) kept. It runs
 * in a process group of its own, ended with it: what it started in the background (the walkthrough's
 * webhook receiver, left running by a step that failed) does not outlive it.
 */
function run(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const endGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // The group has ended already.
      }
    };
    let output = '';
    let code: number | null = null;
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(endGroup, 180_000);
    child.on('error', reject);
    child.on('exit', (exitCode) => {
      code = exitCode;
      clearTimeout(timer);
      endGroup();
    });
    child.on('close', () => resolve({ code, output }));
  });
}

/** A folder that looks like the repository's to the walkthrough: `docs/`, and `data/` of the server. */
async function workdirFor(dataDir: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'signery-walkthrough-'));
  await symlink(join(ROOT, 'docs'), join(dir, 'docs'));
  await symlink(dataDir, join(dir, 'data'));
  return dir;
}

/** A folder where the walkthrough fails at its upload (step 3), after it made its webhook: no `docs/`. */
async function workdirWithoutContract(dataDir: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'signery-walkthrough-failing-'));
  await symlink(dataDir, join(dir, 'data'));
  return dir;
}

const walkthrough = await guideWalkthrough();

describe('the README’s five minutes with the API', () => {
  it('are commands of the guide’s walkthrough, as they are written there', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const section = /^## Five minutes with the API\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1] ?? '';
    const lines = [...section.matchAll(/```sh\n([\s\S]*?)\n```/g)].flatMap(([, code]) => code!.split('\n'));
    assert.ok(
      lines.length >= 10,
      `the README's shell blocks under "Five minutes with the API": ${lines.length} lines`,
    );
    const guide = new Set(walkthrough.shell.split('\n'));
    assert.deepEqual(
      lines.filter((line) => !guide.has(line)),
      [],
      'lines of the README that the tested walkthrough does not have',
    );
  });
});

describe('the integration guide’s walkthrough with curl, run as written', () => {
  const server = useServer({ env: walkthrough.serverEnv });
  let workdir: string;
  before(async () => {
    workdir = await workdirFor(server.dataDir);
  });
  after(async () => {
    await rm(workdir, { recursive: true, force: true });
  });

  it('logs in, uploads, creates, shares, signs as the recipient, hears the webhook, downloads and verifies, twice', async () => {
    const hookPort = String(await freePort());
    for (const time of ['first', 'second']) {
      const { code, output } = await run('bash', ['-euo', 'pipefail', '-c', walkthrough.shell], {
        cwd: workdir,
        env: { BASE: `${server.url}/api/v1`, HOOK_PORT: hookPort },
      });
      assert.equal(code, 0, `the walkthrough stopped the ${time} time (exit ${code}):\n${output}`);
      assert.match(output, /"passwordRequired": true/, 'the share (step 5)');
      assert.match(output, /webhook signature verified/, 'the webhook (step 7)');
      assert.match(
        output,
        /"indication": "TOTAL_PASSED"[\s\S]*"indication": "TOTAL_PASSED"/,
        'both signatures',
      );
      const signed = await readFile(join(workdir, 'signed.pdf'));
      assert.equal(signed.subarray(0, 5).toString(), '%PDF-');
      assert.deepEqual(await webhooksOf(server), [], `webhooks left by the ${time} run`);
    }
  });

  it('deletes its webhook also when a step fails (run as a script, its EXIT trap)', async () => {
    const failing = await workdirWithoutContract(server.dataDir);
    try {
      const { code, output } = await run('bash', ['-euo', 'pipefail', '-c', walkthrough.shell], {
        cwd: failing,
        env: { BASE: `${server.url}/api/v1`, HOOK_PORT: String(await freePort()) },
      });
      assert.notEqual(code, 0, `the walkthrough went on without the contract:\n${output}`);
      // curl's error 26: the file to upload cannot be read.
      assert.match(output, /curl: \(26\)/, 'it stopped at the upload (step 3)');
      assert.deepEqual(await webhooksOf(server), [], 'webhooks left by the failed run');
    } finally {
      await rm(failing, { recursive: true, force: true });
    }
  });
});

describe('the integration guide’s walkthrough with the typed client, installed, type-checked and run', () => {
  const server = useServer({ env: walkthrough.serverEnv });
  // The integrator's project, outside the repository, with the client installed from the repository's
  // folder as the guide says (`npm install --prefix <project> <repository>/clients/typescript`).
  let project: string;
  let program: string;
  let workdir: string;
  before(async () => {
    workdir = await workdirFor(server.dataDir);
    project = await mkdtemp(join(tmpdir(), 'signery-walkthrough-project-'));
    await installClientFromPath(project);
    program = join(project, 'walkthrough.mts');
    await writeFile(program, walkthrough.typescript);
    // Node's types are the repository's; the client's are those npm installed in the project.
    await writeFile(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2023',
          lib: ['ES2023', 'DOM'],
          module: 'NodeNext',
          strict: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: true,
          noEmit: true,
          typeRoots: [join(ROOT, 'node_modules', '@types')],
          types: ['node'],
        },
        files: ['walkthrough.mts'],
      }),
    );
  });
  after(async () => {
    await rm(workdir, { recursive: true, force: true });
    await rm(project, { recursive: true, force: true });
  });

  it('type-checks against the client installed in a project of its own', async () => {
    const { code, output } = await run(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project],
      { cwd: project, env: {} },
    );
    assert.equal(code, 0, `tsc:\n${output}`);
  });

  it('runs to a verified, completed document, each answer fitting the OpenAPI description, twice', async () => {
    const hookPort = String(await freePort());
    for (const time of ['first', 'second']) {
      const { code, output } = await run(
        process.execPath,
        ['--import', import.meta.resolve('tsx'), join(import.meta.dirname, 'walkthrough-runner.ts'), program],
        { cwd: workdir, env: { SIGNERY_URL: server.url, HOOK_PORT: hookPort } },
      );
      assert.equal(code, 0, `the walkthrough stopped the ${time} time (exit ${code}):\n${output}`);
      assert.match(output, /the document is completed/);
      assert.match(output, /webhook events: .*documentCompleted/);
      const checked = Number(/(\d+) answers checked/.exec(output)?.[1]);
      assert.ok(checked >= 10, `answers checked against the description: ${checked}\n${output}`);
      assert.deepEqual(await webhooksOf(server), [], `webhooks left by the ${time} run`);
    }
  });

  it('deletes its webhook also when a step fails (its finally)', async () => {
    const failing = await workdirWithoutContract(server.dataDir);
    try {
      const { code, output } = await run(
        process.execPath,
        ['--import', import.meta.resolve('tsx'), program],
        {
          cwd: failing,
          env: { SIGNERY_URL: server.url, HOOK_PORT: String(await freePort()) },
        },
      );
      assert.notEqual(code, 0, `the walkthrough went on without the contract:\n${output}`);
      assert.match(output, /ENOENT[\s\S]*docs\/examples\/contract\.pdf/, 'it stopped at the upload (step 3)');
      assert.deepEqual(await webhooksOf(server), [], 'webhooks left by the failed run');
    } finally {
      await rm(failing, { recursive: true, force: true });
    }
  });
});

/** The callback URLs of the webhooks the guide's administrator sees. */
async function webhooksOf(server: TestServer): Promise<string[]> {
  const token = await server.login(walkthrough.serverEnv.ADMIN_EMAIL!, walkthrough.serverEnv.ADMIN_PASSWORD!);
  const answer = await server.api('GET', '/webhooks', { token });
  assert.equal(answer.status, 200, answer.text);
  return (answer.body.results as { callbackUrl: string }[]).map((webhook) => webhook.callbackUrl);
}

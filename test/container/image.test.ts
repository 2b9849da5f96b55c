import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it, type TestContext } from 'node:test';
import { freePort } from '../helpers/free-port.js';
import { ADMIN, callApi, TEST_DATABASE_URL } from '../helpers/server.js';

/**
 * deploy/Dockerfile, built and run as operators do (issue 41), with podman. No image registry is
 * reachable from the test machines: test/container/build-base-image.sh first builds the image the
 * Dockerfile starts FROM (debootstrap + Node from the npm registry), under that very name.
 */
const DOCKERFILE = 'deploy/Dockerfile';
const IMAGE = 'localhost/signery:container-test';
/** The image's drain setting for this run, and the grace `podman stop` gives before SIGKILL (137). */
const DRAIN_SECONDS = 10;
const GRACE_SECONDS = DRAIN_SECONDS + 20;

const hasCommand = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
const tools = ['podman', 'runc', 'debootstrap'].filter(
  (name) => !hasCommand(name) && !hasCommand(`/usr/sbin/${name}`),
);

// This machine's container needs runc and cgroupfs, and a container may not raise its limits above the
// host's (podman's defaults are higher): the host's own open-file limit, and a process limit under it.
const hardFiles = spawnSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).stdout.trim();
const PODMAN = ['--runtime', 'runc', '--cgroup-manager=cgroupfs'];
const LIMITS = ['--ulimit', `nofile=${hardFiles}:${hardFiles}`, '--ulimit', 'nproc=4096:4096'];

function podman(args: string[], options: { allowFailure?: boolean } = {}): string {
  const run = spawnSync('podman', [...PODMAN, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (run.status !== 0 && !options.allowFailure)
    throw new Error(
      `podman ${args.join(' ')} failed (${run.status}):\n${run.stderr}${run.stdout}`.slice(-4000),
    );
  return run.stdout;
}

/** A long step (image builds), its output kept for the failure message only. */
function runLong(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
    child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${output.slice(-6000)}`)),
    );
  });
}

/** The images the Dockerfile's stages start FROM (the names, not the stages' aliases). */
function baseImages(dockerfile: string): string[] {
  const stages = new Set<string>();
  const bases: string[] = [];
  for (const match of dockerfile.matchAll(/^FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?\s*$/gim)) {
    if (!stages.has(match[1]!)) bases.push(match[1]!);
    if (match[2]) stages.add(match[2]);
  }
  return [...new Set(bases)];
}

const seconds = (ms: number) => (ms / 1000).toFixed(1);

describe(
  'the container image (deploy/Dockerfile, issue 41): built from a locally made base and run with podman; once per CI, in the SQLite pass (no TEST_DATABASE_URL)',
  {
    skip: TEST_DATABASE_URL
      ? 'runs once, in the SQLite pass of the suite: the image does not depend on the database the suite uses'
      : tools.length > 0
        ? `${tools.join(', ')} not installed (.ci/run installs Debian’s packages)`
        : false,
  },
  () => {
    const name = `signery-test-${randomBytes(4).toString('hex')}`;
    let port: number;
    let url: string;
    let startMs: number;
    let started = false;

    before(async () => {
      const bases = baseImages(readFileSync(DOCKERFILE, 'utf8'));
      assert.equal(bases.length, 1, `one base image for every stage, got ${bases.join(', ')}`);
      await runLong('bash', ['test/container/build-base-image.sh', bases[0]!]);
      // --network host: the build stage reaches the npm registry and the Debian archive. --format docker
      // keeps HEALTHCHECK (an OCI image has none).
      await runLong('podman', [
        ...PODMAN,
        'build',
        '--format',
        'docker',
        '--network',
        'host',
        ...LIMITS,
        '--file',
        DOCKERFILE,
        '--tag',
        IMAGE,
        '.',
      ]);
      port = await freePort();
      url = `http://127.0.0.1:${port}`;
      const from = performance.now();
      podman([
        'run',
        '--detach',
        '--name',
        name,
        '--network',
        'host',
        ...LIMITS,
        // As deploy/kubernetes runs it (readOnlyRootFilesystem): it writes to its volume and /tmp only.
        '--read-only',
        '--tmpfs',
        '/tmp',
        '--env',
        `PORT=${port}`,
        '--env',
        'HOST=127.0.0.1',
        '--env',
        `PUBLIC_URL=${url}`,
        '--env',
        `ADMIN_EMAIL=${ADMIN.name}`,
        '--env',
        `ADMIN_PASSWORD=${ADMIN.password}`,
        '--env',
        `SHUTDOWN_DRAIN_SECONDS=${DRAIN_SECONDS}`,
        IMAGE,
      ]);
      started = true;
      for (;;) {
        const ok = await fetch(`${url}/healthz`).then(
          (response) => response.ok,
          () => false,
        );
        if (ok) break;
        const state = podman(['inspect', '--format', '{{.State.Status}}', name]).trim();
        if (state !== 'running') throw new Error(`the container is ${state}:\n${podman(['logs', name])}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      startMs = performance.now() - from;
    });

    after(() => {
      if (started) podman(['rm', '--force', '--time', '0', name], { allowFailure: true });
    });

    it('answers /healthz, and its HEALTHCHECK (on /healthz) says healthy', async (t: TestContext) => {
      const health = await fetch(`${url}/healthz`);
      assert.equal(health.status, 200);
      const check = JSON.parse(
        podman(['image', 'inspect', '--format', '{{json .Config.Healthcheck}}', IMAGE]),
      ) as {
        Test: string[];
      };
      assert.match(check.Test.join(' '), /\/healthz/);
      podman(['healthcheck', 'run', name]);
      const size = Number(podman(['image', 'inspect', '--format', '{{.Size}}', IMAGE]).trim());
      const figures = `image ${(size / 1e6).toFixed(0)} MB; start to /healthz ${seconds(startMs)} s`;
      t.diagnostic(figures);
      console.log(`container figures: ${figures}`);
    });

    it('signs in the administrator its environment names', async () => {
      const login = await callApi(url, 'POST', '/login', {
        body: { name: ADMIN.name, password: ADMIN.password },
      });
      assert.equal(login.status, 200, login.text);
      assert.equal(typeof login.body.token, 'string');
      const wrong = await callApi(url, 'POST', '/login', {
        body: { name: ADMIN.name, password: 'not-the-password' },
      });
      assert.equal(wrong.status, 401, wrong.text);
    });

    it('runs node as PID 1, as a user who is not root, writing only its data volume', () => {
      const status = podman(['exec', name, 'cat', '/proc/1/status']);
      const uids = /^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)/m.exec(status);
      assert.ok(uids, status);
      assert.deepEqual(uids.slice(1).map(Number), [1000, 1000, 1000, 1000]);
      assert.match(
        podman(['exec', name, 'cat', '/proc/1/cmdline']).replaceAll('\0', ' '),
        /^node dist\/main\.js/,
      );
      // The same process as the host sees it.
      const hostPid = podman(['inspect', '--format', '{{.State.Pid}}', name]).trim();
      assert.match(readFileSync(`/proc/${hostPid}/status`, 'utf8'), /^Uid:\s+1000\s/m);
      const volumes = podman(['image', 'inspect', '--format', '{{json .Config.Volumes}}', IMAGE]);
      assert.ok(Object.keys(JSON.parse(volumes) as object).includes('/var/lib/signery'), volumes);
      // The code is root's: the process cannot change it.
      const write = spawnSync('podman', [...PODMAN, 'exec', name, 'touch', '/app/dist/main.js'], {
        encoding: 'utf8',
      });
      assert.notEqual(write.status, 0);
      assert.match(write.stderr, /Permission denied/);
      assert.match(podman(['exec', name, 'ls', '/var/lib/signery']), /\S/);
    });

    it('holds no development dependency, and the production ones load', () => {
      const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
        dependencies: Record<string, string>;
        devDependencies: Record<string, string>;
      };
      const present = (packages: string[]) =>
        podman([
          'run',
          '--rm',
          ...LIMITS,
          '--network',
          'none',
          IMAGE,
          'node',
          '-e',
          `const fs=require('fs');console.log(JSON.stringify(${JSON.stringify(packages)}.filter(p=>fs.existsSync('node_modules/'+p+'/package.json'))))`,
        ]);
      const dev = Object.keys(manifest.devDependencies);
      assert.ok(dev.includes('typescript') && dev.includes('tsx') && dev.includes('eslint'));
      assert.deepEqual(JSON.parse(present(dev)), []);
      assert.deepEqual(
        JSON.parse(present(Object.keys(manifest.dependencies))),
        Object.keys(manifest.dependencies),
      );
      // The native addons, compiled in the build stage, load in the runtime stage.
      podman([
        'run',
        '--rm',
        ...LIMITS,
        '--network',
        'none',
        IMAGE,
        'node',
        '-e',
        "new (require('better-sqlite3'))(':memory:').prepare('select 1').get(); require('pkcs11js')",
      ]);
    });

    it('stops cleanly on SIGTERM: exit 0 before the grace period ends (a SIGKILL would be 137)', (t: TestContext) => {
      const from = performance.now();
      podman(['stop', '--time', String(GRACE_SECONDS), name]);
      const stopMs = performance.now() - from;
      const exitCode = Number(podman(['inspect', '--format', '{{.State.ExitCode}}', name]).trim());
      const logs = podman(['logs', name]);
      assert.equal(exitCode, 0, logs);
      assert.match(logs, /"signal":"SIGTERM"/);
      // This test's fetch keeps an idle connection open, which the node waits for as it would for a
      // proxy's, up to the drain: the figure is the stop with a client connected.
      const figures = `stop on SIGTERM ${seconds(stopMs)} s with a client's idle connection open (drain ${DRAIN_SECONDS} s, grace ${GRACE_SECONDS} s)`;
      t.diagnostic(figures);
      console.log(`container figures: ${figures}`);
    });
  },
);

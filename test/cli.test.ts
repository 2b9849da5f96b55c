import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/base/config.js';
import { useStore } from './helpers/use-server.js';

describe('the signery command', () => {
  const store = useStore('cli');
  const env = () => ({
    ...(process.env as Record<string, string>),
    ...store.env,
    ADMIN_PASSWORD: '',
    ADMIN_EMAIL: '',
  });
  const signery = (args: string[], input?: string) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
      env: env(),
      input,
      encoding: 'utf8',
    });

  /** POST /login on an app over the command's store: the answer. */
  const logIn = async (name: string, password: string) => {
    const app = await buildApp(loadConfig({ ...env(), PORT: '0', HOST: '127.0.0.1' }), { logger: false });
    try {
      return await app.server.inject({ method: 'POST', url: '/api/v1/login', payload: { name, password } });
    } finally {
      await app.close();
    }
  };

  it('migrate applies the migrations once, then reports the database up to date', () => {
    const first = signery(['migrate']);
    assert.equal(first.status, 0, first.stderr);
    assert.match(first.stdout, /applied: 0001-foundation/);
    const second = signery(['migrate']);
    assert.equal(second.status, 0);
    assert.match(second.stdout, /up to date/);
  });

  it('create-admin makes a super-administrator who can log in; a second time changes nothing', async () => {
    const created = signery(['create-admin', 'root@example.test'], 'root-password-1\n');
    assert.equal(created.status, 0, created.stderr);
    const again = signery(['create-admin', 'root@example.test'], 'other-password-1\n');
    assert.equal(again.status, 1);
    const login = await logIn('root@example.test', 'root-password-1');
    assert.equal(login.statusCode, 200);
    assert.equal(login.json<{ user: { role: string } }>().user.role, 'superAdmin');
  });

  it('a short password and unknown commands are refused with a usage message', () => {
    assert.equal(signery(['create-admin', 'x@example.test'], 'short\n').status, 2);
    const unknown = signery(['frobnicate']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /Usage: signery/);
  });

  it('migrate-store, backup and restore refuse arguments that name no operation with a usage message (exit 2)', () => {
    for (const [args, message] of [
      [['migrate-store'], /--to must name the target database as a postgres:\/\/ URL/],
      [
        ['migrate-store', '--to', 'postgres://x@127.0.0.1/db', '--blobs', 'gs://bucket'],
        /--blobs must be an s3:\/\/bucket/,
      ],
      [['backup', 'one', 'two'], /backup takes one directory/],
    ] as const) {
      const refused = signery([...args]);
      assert.equal(refused.status, 2, refused.stderr);
      assert.match(refused.stderr, message);
      assert.match(
        refused.stderr,
        /migrate-store --to postgres:\/\/… .*\n[\s\S]*backup <dir>[\s\S]*restore <dir> \[--force\]/,
      );
    }
  });

  it('worker refuses a bad JOB_* setting by name before it starts', () => {
    const refused = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'worker'], {
      env: { ...env(), JOB_CONCURRENCY: '0' },
      encoding: 'utf8',
    });
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /Configuration error: JOB_CONCURRENCY must be an integer of at least 1/);
    assert.match(signery(['help']).stdout, /worker +run the job worker only/);
  });

  it('--version, help that -h and --help agree on, and an unknown command named (issue 25)', async () => {
    const { version } = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
    for (const flag of ['--version', '-v']) {
      const shown = signery([flag]);
      assert.equal(shown.status, 0);
      assert.equal(shown.stdout.trim(), version);
    }
    const help = ['help', '-h', '--help'].map((flag) => signery([flag]));
    for (const shown of help) {
      assert.equal(shown.status, 0);
      assert.equal(shown.stdout, help[0]!.stdout);
      assert.match(shown.stdout, /^Usage: signery <command>/);
    }
    const unknown = signery(['frobnicate']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /^Unknown command "frobnicate"\./);
  });

  it('create-admin at a terminal asks for the password without showing it', async () => {
    // A pseudo-terminal (python's pty): what the terminal shows is everything the command writes.
    const driver = `
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b''
while b'Password for' not in out:
    out += os.read(fd, 1024)
os.write(fd, b'typed-secret-77\\r')
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(status))
`;
    const run = spawnSync(
      'python3',
      ['-c', driver, process.execPath, '--import', 'tsx', 'src/cli.ts', 'create-admin', 'tty@example.test'],
      { env: env(), encoding: 'utf8', timeout: 120_000 },
    );
    assert.equal(run.status, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /Password for tty@example\.test: /);
    assert.doesNotMatch(run.stdout, /typed-secret-77/, 'the password is never shown');
    const login = await logIn('tty@example.test', 'typed-secret-77');
    assert.equal(login.statusCode, 200, login.body);
  });
});

/**
 * bench/upload: one large upload and download through the real HTTP API, printing MB/s and how much
 * the server's resident memory grew at its peak (targets: ≥ 200 MB/s to the filesystem store, RSS
 * growth below 64 MB whatever the file size). Server pinned to CPU 0, this client to CPU 1.
 *
 *   npm run bench:upload -- [--mb 200] [--runs 3]
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = new URL('../..', import.meta.url).pathname;
const ADMIN = { name: 'bench-admin@example.com', password: 'bench-password-0123456789' };
const MB = 1024 * 1024;

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

/** Resets the kernel's peak-RSS mark, so VmHWM afterwards is the peak of what follows. */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

async function* multipartBody(boundary: string, totalBytes: number): AsyncGenerator<Uint8Array> {
  yield Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  // Fresh random bytes per chunk would cost the client more CPU than the server spends; one random
  // megabyte with a changing first word keeps the content unique without that.
  const chunk = randomBytes(MB);
  for (let sent = 0, n = 0; sent < totalBytes; n++) {
    const size = Math.min(MB, totalBytes - sent);
    chunk.writeUInt32LE(n, 0);
    yield Buffer.from(chunk.subarray(0, size));
    sent += size;
  }
  yield Buffer.from(`\r\n--${boundary}--\r\n`);
}

async function main(): Promise<void> {
  const sizeMb = arg('mb', 200);
  const runs = arg('runs', 3);
  if (!existsSync(join(ROOT, 'dist', 'main.js'))) {
    console.log('build: npm run build');
    spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'signery-bench-upload-'));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const server = spawn('taskset', ['-c', '0', process.execPath, join(ROOT, 'dist', 'main.js')], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      ADMIN_EMAIL: ADMIN.name,
      ADMIN_PASSWORD: ADMIN.password,
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}/api/v1`;
  try {
    for (let i = 0; ; i++) {
      if (
        await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      if (i > 100) throw new Error('the server did not start');
      await sleep(100);
    }
    const pid =
      Number(
        spawnSync('pgrep', ['-P', String(server.pid)])
          .stdout.toString()
          .trim(),
      ) || server.pid;
    if (!pid) throw new Error('no server pid');
    const login = (await (
      await fetch(`${base}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(ADMIN),
      })
    ).json()) as { token: string };
    const token = login.token;
    await fetch(`${base}/settings/properties?token=${token}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ dropZoneMaxSize: Math.min(1024, sizeMb + 1), storageLimitMb: 100 * 1024 }),
    });
    console.log(
      `server pid ${pid} on CPU 0, client on CPU 1; ${runs} runs of ${sizeMb} MB to the filesystem store`,
    );
    const rows: string[] = [];
    for (let run = 1; run <= runs; run++) {
      const before = memory(pid);
      resetPeak(pid);
      const boundary = `----signery${randomBytes(8).toString('hex')}`;
      const started = performance.now();
      const response = await fetch(`${base}/files/saveFile?token=${token}`, {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
        body: ReadableStream.from(multipartBody(boundary, sizeMb * MB)),
        duplex: 'half',
      });
      const uploaded = (await response.json()) as { file?: { id: string; size: number } };
      const uploadSeconds = (performance.now() - started) / 1000;
      if (!uploaded.file) throw new Error(`upload failed: ${response.status} ${JSON.stringify(uploaded)}`);
      const afterUpload = memory(pid);
      resetPeak(pid);
      const downloadStart = performance.now();
      const download = await fetch(`${base}/files/loadFile/hash/${uploaded.file.id}?token=${token}`);
      let received = 0;
      for await (const part of download.body as unknown as AsyncIterable<Uint8Array>) received += part.length;
      const downloadSeconds = (performance.now() - downloadStart) / 1000;
      const afterDownload = memory(pid);
      if (received !== sizeMb * MB) throw new Error(`downloaded ${received} bytes of ${sizeMb * MB}`);
      const row = [
        `run ${run}`,
        `upload ${(sizeMb / uploadSeconds).toFixed(0)} MB/s`,
        `download ${(sizeMb / downloadSeconds).toFixed(0)} MB/s`,
        `RSS before ${(before.rss / MB).toFixed(0)} MB`,
        `peak growth upload ${((afterUpload.peak - before.rss) / MB).toFixed(1)} MB`,
        `download ${((afterDownload.peak - afterUpload.rss) / MB).toFixed(1)} MB`,
      ].join(' | ');
      console.log(row);
      rows.push(row);
    }
    console.log(
      '\ntargets: upload ≥ 200 MB/s to the filesystem store; RSS growth < 64 MB whatever the file size',
    );
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

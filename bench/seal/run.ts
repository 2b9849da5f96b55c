/**
 * Sealing and signing latency and throughput: `npm run bench:seal [-- --iterations 40] [-- --big-mb 1000]`.
 *
 * One run measures, on a 1-page and a 300-page PDF (generated, see test/fixtures), one document at a
 * time (the figures are per-core latencies), the cases interleaved round by round so that all of them
 * share whatever load the machine has:
 * - bare @libpdf/core: its own `pdf.sign` (invisible signature) with the seal key, the reference;
 * - our engine as a library: `signPdf` (PAdES B-B: prepare + sign + finish, pkijs signed attributes,
 *   our incremental writer), no database, no HTTP;
 * - through HTTP: the app built in this process on a fresh SQLite data directory (LOG_LEVEL=warn, no
 *   job worker), called over loopback with the administrator's token: PUT /documents/seal/1 and
 *   PUT /documents/sign/1 (one signature entry, drawn as an annotation), each on a fresh document
 *   uploaded and created through the API beforehand (not timed). The latency includes the client's
 *   fetch, which runs in the same process;
 * - the floor of a seal: SHA-256 of the whole file plus one RSA-2048 signature, what no signer can skip;
 * - the cost of one durable write on this data directory: a new file of the sealed size written and
 *   fsynced (a seal makes two: the blob, and SQLite's commit; the directory entry a third).
 * All of them use the same RSA-2048 seal key (the dev CA under the data directory). It prints p50,
 * p99 and documents/s per case, our p50 over bare @libpdf/core's, and the targets (issue 26): seal
 * p50 ≤ 3 ms for 1 page and ≤ 6 ms for 300 pages through HTTP. Never asserted by tests.
 *
 * Then, unless `--big-mb 0`, one seal of a PDF of that many MB (1000 by default) through HTTP: the
 * file is written by code (a few pages showing large images), uploaded with `dropZoneMaxSize` raised
 * to its maximum, made a document and sealed. It prints the seal's time and MB/s beside this disk's
 * speed measured in the same run (the file read and copied durably), and the growth of the process's
 * peak resident memory during the seal (target: < 64 MB, whatever the file size). The sealed file is
 * downloaded and checked by pdfsig and qpdf --check when they are installed.
 *
 * `--data-dir DIR` puts the data directory under DIR instead of the system's temporary directory
 * (`--data-dir /dev/shm`: on tmpfs, fsync is free, which isolates the cost of durable writes).
 */
import { execFile } from 'node:child_process';
import { createHash, createPrivateKey, randomBytes, sign as rsaSign, webcrypto } from 'node:crypto';
import { createWriteStream, openAsBlob, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, open, readFile, rm, unlink } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify, parseArgs } from 'node:util';
import { CryptoKeySigner, PDF } from '@libpdf/core';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/base/config.js';
import { signPdf } from '../../src/pdf/sign-pdf.js';
import { openDevCa } from '../../src/pki/dev-ca.js';
import { manyPagesPdf, onePagePdf } from '../../test/fixtures/pdf-fixtures.js';
import { writeBigPdf } from '../../test/fixtures/big-pdf.js';
import { diskCopySpeed } from './disk-speed.js';

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '40' },
    // e.g. /dev/shm: a tmpfs, where fsync costs nothing, shows how much of the HTTP time is durability.
    'data-dir': { type: 'string', default: tmpdir() },
    'big-mb': { type: 'string', default: '1000' },
  },
});
const iterations = Math.max(5, Number(values.iterations));
const bigMb = Math.max(0, Number(values['big-mb']));
const WARM_UP = 3;
const TARGET = { sealP50Ms: { '1 page': 3, '300 pages': 6 } as Record<string, number>, bigRssMb: 64 };
const ADMIN = { name: 'bench-admin@example.com', password: 'bench-password-0123456789' };
const MB = 1024 * 1024;

type Kind = 'bare' | 'library' | 'seal' | 'sign' | 'floor' | 'fsync';

interface Row {
  label: string;
  pages: string;
  kind: Kind;
  p50: number;
  p99: number;
  perSecond: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Case {
  row: Omit<Row, 'p50' | 'p99' | 'perSecond'>;
  task: (i: number) => Promise<unknown>;
}

/**
 * Runs each case's `task(i)` WARM_UP times unmeasured (JIT, caches), then `iterations` rounds in
 * which every case runs once, one after another. Interleaving puts every case under the same load
 * from the rest of the machine, so the ratio to the bare library holds even when that load moves.
 * docs/s is one case's throughput on its own: 1000 / its mean latency.
 */
async function measure(pages: string, cases: Case[]): Promise<Row[]> {
  for (const { task } of cases) for (let i = 0; i < WARM_UP; i++) await task(i);
  const times = cases.map((): number[] => []);
  for (let i = 0; i < iterations; i++) {
    for (const [c, { task }] of cases.entries()) {
      const t0 = performance.now();
      await task(WARM_UP + i);
      times[c]!.push(performance.now() - t0);
    }
    if ((i + 1) % 10 === 0 || i + 1 === iterations)
      process.stderr.write(`\r  ${pages}: round ${i + 1}/${iterations}   `);
  }
  process.stderr.write('\n');
  return cases.map(({ row }, c) => {
    const sorted = [...times[c]!].sort((a, b) => a - b);
    const mean = sorted.reduce((sum, t) => sum + t, 0) / sorted.length;
    return { ...row, p50: percentile(sorted, 50), p99: percentile(sorted, 99), perSecond: 1000 / mean };
  });
}

/** The API of the app under test, over real HTTP. */
class Client {
  constructor(
    readonly base: string,
    readonly token: string,
  ) {}

  static async login(base: string): Promise<Client> {
    const response = await fetch(`${base}/api/v1/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    if (response.status !== 200) throw new Error(`login: ${response.status} ${await response.text()}`);
    return new Client(base, ((await response.json()) as { token: string }).token);
  }

  async call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.base}/api/v1${path}?token=${this.token}`, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  }

  /** Uploads the PDF (bytes, or a file-backed Blob streamed from disk) and creates a document from it. */
  async newDocument(pdf: Uint8Array | Blob, title: string): Promise<string> {
    const form = new FormData();
    const blob = pdf instanceof Blob ? pdf : new Blob([pdf], { type: 'application/pdf' });
    form.append('file', blob, `${title}.pdf`);
    const uploaded = await fetch(`${this.base}/api/v1/files/saveFile?token=${this.token}`, {
      method: 'POST',
      body: form,
    });
    if (uploaded.status !== 200) throw new Error(`upload: ${uploaded.status} ${await uploaded.text()}`);
    const { file } = (await uploaded.json()) as { file: { id: string } };
    const created = await this.call('POST', '/documents', {
      body: { documentTitle: title, pdfFile: { content: file.id } },
    });
    return (created.results as { documentId: string }[])[0]!.documentId;
  }

  async newDocuments(bytes: Uint8Array, count: number, label: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push(await this.newDocument(bytes, `${label} ${i + 1}`));
      if ((i + 1) % 10 === 0 || i + 1 === count)
        process.stderr.write(`\r  creating documents for ${label}: ${i + 1}/${count}   `);
    }
    process.stderr.write('\n');
    return ids;
  }

  /** Streams a document's main file to `path`. */
  async downloadMainFile(documentId: string, path: string): Promise<void> {
    const document = (await this.call('GET', `/documents/${documentId}`)) as {
      results: { pdfFile: { content: string } }[];
    };
    const response = await fetch(
      `${this.base}/api/v1/files/loadFile/hash/${document.results[0]!.pdfFile.content}?token=${this.token}`,
    );
    if (response.status !== 200 || !response.body) throw new Error(`download: ${response.status}`);
    await pipeline(Readable.fromWeb(response.body), createWriteStream(path));
  }
}

const SIGNATURE = {
  type: 'signature',
  pages: [1],
  position: { percentX: 0.1, percentY: 0.8, percentWidth: 0.25, percentHeight: 0.08 },
};

/** Writes `bytes` to a new file in `dir` and fsyncs it: what one durable write costs here. */
async function durableWrite(dir: string, bytes: Buffer, i: number): Promise<void> {
  const path = join(dir, `fsync-${i}`);
  const handle = await open(path, 'wx');
  try {
    await handle.write(bytes);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await unlink(path);
}

function memory(): { rss: number; peak: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

const run = promisify(execFile);

/** pdfsig's and qpdf's verdicts on a file, or why they could not be had. */
async function oracles(path: string): Promise<string> {
  const verdicts: string[] = [];
  try {
    const { stdout } = await run('pdfsig', ['-nocert', path], { timeout: 600_000, maxBuffer: 1 << 20 });
    const valid = /Signature Validation: Signature is Valid/.test(stdout);
    const whole = /Total document signed/.test(stdout);
    verdicts.push(`pdfsig: ${valid ? 'valid' : 'NOT VALID'}${whole ? ', whole document signed' : ''}`);
  } catch (error) {
    verdicts.push(`pdfsig: ${(error as Error).message.split('\n')[0]}`);
  }
  try {
    await run('qpdf', ['--check', path], { timeout: 600_000, maxBuffer: 1 << 24 });
    verdicts.push('qpdf --check: no errors');
  } catch (error) {
    verdicts.push(`qpdf --check: ${(error as Error).message.split('\n').slice(0, 3).join(' ')}`);
  }
  return verdicts.join('; ');
}

interface BigResult {
  sizeMb: number;
  diskMbPerSecond: number;
  sealMs?: number;
  /** CPU time of this process (every thread) during the seal: what the seal costs whatever the load. */
  cpuMs?: number;
  /** The machine's load average (1 minute) at the end of the seal. */
  load?: number;
  rssGrowthMb?: number;
  refused?: string;
  checked?: string;
}

/**
 * The 1 GB case: writes the file, measures this disk's copy speed on it, uploads it (streamed from
 * disk), makes it a document and seals it once through HTTP, measuring the peak RSS growth of this
 * process (the app's) during the seal. A refusal anywhere is reported, not thrown.
 */
async function sealBigFile(client: Client, dir: string): Promise<BigResult> {
  const path = join(dir, 'big.pdf');
  process.stderr.write(`Writing a ${bigMb} MB PDF...\n`);
  const size = writeBigPdf(path, bigMb * 1e6);
  const sizeMb = size / MB;
  const diskMbPerSecond = diskCopySpeed(path, size, `${path}.copy`);
  await client.call('PUT', '/settings/properties', { dropZoneMaxSize: 1024 });
  let documentId: string;
  try {
    process.stderr.write('Uploading it and creating the document...\n');
    documentId = await client.newDocument(await openAsBlob(path, { type: 'application/pdf' }), 'big');
  } catch (error) {
    return { sizeMb, diskMbPerSecond, refused: (error as Error).message.slice(0, 300) };
  }
  global.gc?.();
  const before = memory();
  // Resets the kernel's peak-RSS mark, so VmHWM afterwards is the peak of the seal.
  writeFileSync('/proc/self/clear_refs', '5');
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  try {
    await client.call('PUT', '/documents/seal/1', { id: documentId, certificate: true });
  } catch (error) {
    return { sizeMb, diskMbPerSecond, refused: (error as Error).message.slice(0, 300) };
  }
  const sealMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const load = loadavg()[0]!;
  const rssGrowthMb = (memory().peak - before.rss) / MB;
  await unlink(path);
  process.stderr.write('Checking the sealed file with pdfsig and qpdf...\n');
  const sealed = join(dir, 'big-sealed.pdf');
  await client.downloadMainFile(documentId, sealed);
  const checked = await oracles(sealed);
  await unlink(sealed);
  return { sizeMb, diskMbPerSecond, sealMs, cpuMs, load, rssGrowthMb, checked };
}

function printRows(rows: Row[]): void {
  console.log(
    'case'.padEnd(34),
    'pages'.padEnd(10),
    'p50 ms'.padStart(7),
    'p99 ms'.padStart(7),
    'docs/s'.padStart(7),
    'ours/bare'.padStart(10),
    '  target',
  );
  for (const row of rows) {
    const bare = rows.find((r) => r.kind === 'bare' && r.pages === row.pages)!;
    const ratio = row.p50 / bare.p50;
    const target = TARGET.sealP50Ms[row.pages];
    const verdict =
      row.kind === 'seal' && target !== undefined
        ? `p50 ≤ ${target} ms ${row.p50 <= target ? 'met' : 'MISSED'}`
        : '-';
    console.log(
      row.label.padEnd(34),
      row.pages.padEnd(10),
      row.p50.toFixed(2).padStart(7),
      row.p99.toFixed(2).padStart(7),
      row.perSecond.toFixed(1).padStart(7),
      (['library', 'seal', 'sign'].includes(row.kind) ? ratio.toFixed(2) : '-').padStart(10),
      ' ',
      verdict,
    );
  }
  const seal = (pages: string) => rows.find((r) => r.kind === 'seal' && r.pages === pages)!;
  const [few, many] = [seal('1 page'), seal('300 pages')];
  const floor = rows.find((r) => r.kind === 'floor' && r.pages === '1 page')!;
  const fsync = rows.find((r) => r.kind === 'fsync' && r.pages === '1 page')!;
  console.log(
    `\nseal p50, 300 pages over 1 page: ${(many.p50 / few.p50).toFixed(2)} (flat in the page count: ≈ 1); ` +
      `durable floor of a 1-page seal ≈ floor + 2 fsyncs = ${(floor.p50 + 2 * fsync.p50).toFixed(2)} ms`,
  );
}

function printBig(big: BigResult): void {
  console.log(
    `\n${big.sizeMb.toFixed(0)} MiB PDF: this disk reads and copies it durably at ${big.diskMbPerSecond.toFixed(0)} MB/s`,
  );
  if (big.refused) {
    console.log(`  seal through HTTP: refused or failed: ${big.refused}`);
    return;
  }
  const speed = big.sizeMb / (big.sealMs! / 1000);
  console.log(
    `  seal through HTTP: ${(big.sealMs! / 1000).toFixed(2)} s, ${speed.toFixed(0)} MB/s ` +
      `(${(speed / big.diskMbPerSecond).toFixed(2)} × disk: ${speed >= big.diskMbPerSecond ? 'met' : 'MISSED'}), ` +
      `peak RSS growth ${big.rssGrowthMb!.toFixed(1)} MB (< ${TARGET.bigRssMb} MB ${big.rssGrowthMb! < TARGET.bigRssMb ? 'met' : 'MISSED'})`,
  );
  console.log(
    `  CPU time of the process during the seal: ${(big.cpuMs! / 1000).toFixed(2)} s (all threads; load average ${big.load!.toFixed(2)} at its end)`,
  );
  console.log(`  the sealed file: ${big.checked}`);
}

const dir = await mkdtemp(join(values['data-dir'], 'signery-bench-seal-'));
let app: App | undefined;
try {
  process.stderr.write('Generating the dev CA and the documents...\n');
  // The app opens the same dev CA (DATA_DIR/pki): every case signs with the same key.
  const ca = await openDevCa({ dir: join(dir, 'pki') });
  const documents = [
    { pages: '1 page', bytes: onePagePdf().bytes },
    { pages: '300 pages', bytes: manyPagesPdf(300).bytes },
  ];
  const sealKeyPem = await readFile(join(dir, 'pki', 'seal.key'), 'utf8');
  const sealKey = createPrivateKey(sealKeyPem);
  const der = Buffer.from(sealKeyPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const cryptoKey = await webcrypto.subtle.importKey(
    'pkcs8',
    der,
    { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const libpdfSigner = new CryptoKeySigner(cryptoKey, ca.sealCertificate, 'RSA', 'RSASSA-PKCS1-v1_5', [
    ca.rootCertificate,
  ]);

  app = await buildApp(
    loadConfig({
      DATA_DIR: dir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ADMIN_EMAIL: ADMIN.name,
      ADMIN_PASSWORD: ADMIN.password,
      // Measured is the work, not the rate limits: one token makes every call.
      RATE_LIMIT: 'off',
    }),
    { logger: false, worker: false },
  );
  const base = (await app.server.listen({ port: 0, host: '127.0.0.1' })).replace('localhost', '127.0.0.1');
  const client = await Client.login(base);
  // The signed attributes of a seal are about this long; the floor signs their hash.
  const signedAttributes = randomBytes(300);

  const rows: Row[] = [];
  for (const document of documents) {
    const { pages, bytes } = document;
    const toSeal = await client.newDocuments(bytes, WARM_UP + iterations, `seal ${pages}`);
    const toSign = await client.newDocuments(bytes, WARM_UP + iterations, `sign ${pages}`);
    // A sealed file is the document plus about 20 KB (the signature's placeholder and objects).
    const sealedBytes = Buffer.alloc(bytes.length + 20 * 1024, 0x30);
    rows.push(
      ...(await measure(pages, [
        {
          row: { label: '@libpdf/core pdf.sign (bare)', pages, kind: 'bare' },
          task: async () => (await PDF.load(bytes)).sign({ signer: libpdfSigner }),
        },
        {
          row: { label: 'Signery signPdf (library)', pages, kind: 'library' },
          task: () => signPdf({ pdf: bytes, signer: ca.sealSigner }),
        },
        {
          row: { label: 'PUT /documents/seal (HTTP)', pages, kind: 'seal' },
          task: (i) => client.call('PUT', '/documents/seal/1', { id: toSeal[i], certificate: true }),
        },
        {
          row: { label: 'PUT /documents/sign (HTTP)', pages, kind: 'sign' },
          task: (i) => client.call('PUT', '/documents/sign/1', { id: toSign[i], signatures: [SIGNATURE] }),
        },
        {
          row: { label: 'floor: SHA-256 of the file + RSA', pages, kind: 'floor' },
          task: () => {
            createHash('sha256').update(bytes).digest();
            rsaSign('sha256', signedAttributes, sealKey);
            return Promise.resolve();
          },
        },
        {
          row: { label: 'fsync: write of the sealed size', pages, kind: 'fsync' },
          task: (i) => durableWrite(dir, sealedBytes, i),
        },
      ])),
    );
  }
  const big = bigMb > 0 ? await sealBigFile(client, dir) : undefined;

  console.log(
    `\nSealing and signing, ${iterations} documents per case after ${WARM_UP} warm-up, one at a time, cases interleaved, data directory under ${values['data-dir']} (Node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
  );
  printRows(rows);
  if (big) printBig(big);
} finally {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
}

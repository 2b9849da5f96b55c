/**
 * Sealing and signing latency and throughput: `npm run bench:seal [-- --iterations 40]`.
 *
 * One run measures, on a 1-page and a 100-page PDF (generated, see test/fixtures), one document at a
 * time (the figures are per-core latencies), the cases interleaved round by round so that all of them
 * share whatever load the machine has:
 * - bare @libpdf/core: its own `pdf.sign` (invisible signature) with the seal key, the reference;
 * - our engine as a library: `signPdf` (PAdES B-B: prepare + sign + finish, pkijs signed attributes,
 *   our incremental writer), no database, no HTTP;
 * - through HTTP: the app built in this process on a fresh SQLite data directory (LOG_LEVEL=warn, no
 *   job worker), called over loopback with the administrator's token: PUT /documents/seal/1 and
 *   PUT /documents/sign/1 (one signature entry, drawn as an annotation), each on a fresh document
 *   uploaded and created through the API beforehand (not timed). The latency includes the client's
 *   fetch, which runs in the same process.
 * All of them use the same RSA-2048 seal key (the dev CA under the data directory). It prints p50,
 * p99 and documents/s per case, our p50 over bare @libpdf/core's, and the targets (issue 4): 1-page
 * seal p50 ≤ 15 ms through HTTP, and our time ≤ 1.3 × the bare library's. Never asserted by tests.
 * `--data-dir DIR` puts the data directory under DIR instead of the system's temporary directory
 * (`--data-dir /dev/shm`: on tmpfs, fsync is free, which isolates the cost of durable writes).
 */
import { webcrypto } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CryptoKeySigner, PDF } from '@libpdf/core';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/core/config.js';
import { signPdf } from '../../src/pdf/sign-pdf.js';
import { openDevCa } from '../../src/pki/dev-ca.js';
import { manyPagesPdf, onePagePdf } from '../../test/fixtures/pdf-fixtures.js';

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '40' },
    // e.g. /dev/shm: a tmpfs, where fsync costs nothing, shows how much of the HTTP time is durability.
    'data-dir': { type: 'string', default: tmpdir() },
  },
});
const iterations = Math.max(5, Number(values.iterations));
const WARM_UP = 3;
const TARGET = { sealP50Ms: 15, ratio: 1.3 };
const ADMIN = { name: 'bench-admin@example.com', password: 'bench-password-0123456789' };

interface Row {
  label: string;
  pages: string;
  kind: 'bare' | 'library' | 'seal' | 'sign';
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

  async call(method: string, path: string, body: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.base}/api/v1${path}?token=${this.token}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  }

  /** Uploads the PDF and creates a document from it: the setup of one measured call. */
  async newDocument(bytes: Uint8Array, title: string): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob([bytes], { type: 'application/pdf' }), `${title}.pdf`);
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
}

const SIGNATURE = {
  type: 'signature',
  pages: [1],
  position: { percentX: 0.1, percentY: 0.8, percentWidth: 0.25, percentHeight: 0.08 },
};

const dir = await mkdtemp(join(values['data-dir'], 'signery-bench-seal-'));
let app: App | undefined;
try {
  process.stderr.write('Generating the dev CA and the documents...\n');
  // The app opens the same dev CA (DATA_DIR/pki): every case signs with the same key.
  const ca = await openDevCa({ dir: join(dir, 'pki') });
  const documents = [
    { pages: '1 page', bytes: onePagePdf().bytes },
    { pages: '100 pages', bytes: manyPagesPdf(100).bytes },
  ];
  const sealKeyPem = await readFile(join(dir, 'pki', 'seal.key'), 'utf8');
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

  const rows: Row[] = [];
  for (const document of documents) {
    const { pages, bytes } = document;
    const toSeal = await client.newDocuments(bytes, WARM_UP + iterations, `seal ${pages}`);
    const toSign = await client.newDocuments(bytes, WARM_UP + iterations, `sign ${pages}`);
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
      ])),
    );
  }

  console.log(
    `\nSealing and signing, ${iterations} documents per case after ${WARM_UP} warm-up, one at a time, cases interleaved, data directory under ${values['data-dir']} (Node ${process.version}, ${cpus().length} CPUs, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
  );
  console.log(
    'case'.padEnd(30),
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
    const targets: string[] = [];
    if (row.kind === 'seal' && row.pages === '1 page') {
      targets.push(`p50 ≤ ${TARGET.sealP50Ms} ms ${row.p50 <= TARGET.sealP50Ms ? 'met' : 'MISSED'}`);
    }
    if (row.kind !== 'bare') {
      targets.push(`≤ ${TARGET.ratio} × bare ${ratio <= TARGET.ratio ? 'met' : 'MISSED'}`);
    }
    console.log(
      row.label.padEnd(30),
      row.pages.padEnd(10),
      row.p50.toFixed(1).padStart(7),
      row.p99.toFixed(1).padStart(7),
      row.perSecond.toFixed(1).padStart(7),
      (row.kind === 'bare' ? '-' : ratio.toFixed(2)).padStart(10),
      ' ',
      targets.length ? targets.join(', ') : '-',
    );
  }
} finally {
  await app?.close();
  await rm(dir, { recursive: true, force: true });
}

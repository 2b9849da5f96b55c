/**
 * bench/verify: verification of a many-signature, many-page PDF through the real HTTP API, p50 and
 * p99 of GET /documents/:id/verify and POST /verify, beside a floor measured in the same run: hashing
 * every signature's byte ranges and verifying every signature value (RSA), with nothing else. Target
 * (issue 26): ≤ 50 ms through HTTP for 10 signatures on 300 pages.
 *
 *   npm run bench:verify -- [--requests 40] [--warmup 5] [--pages 300] [--signers 9] [--compare DIR]
 *                           [--source DIR] [--cpu-prof DIR]
 *
 * The file is made once, through the API of a server of this tree, with the signing code as it runs
 * for users: a 300-page PDF shared with `--signers` users who each sign it (PAdES B-LT: a signature
 * timestamp from an outside TSA, then the chains' OCSP answers and CRLs in the document security
 * store), and the seal that completes the document, with the audit trail embedded before it. That is
 * `--signers` + 1 signatures, and the revocation data the verification reads from the file. The
 * servers measured then start on copies of that server's data (so they trust its development CA and
 * hold the document); `--compare DIR` serves a second build (another checkout's dist/) beside this
 * one, the two measured in turns, and their reports must be identical but for `validationTime`.
 * Servers on CPU 0, this client on CPU 1. `--source DIR` keeps the document's server data there
 * and reuses it next time; `--cpu-prof DIR` writes a CPU profile of this tree's server there.
 */
import { createHash, verify as verifySignature, X509Certificate } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { openPdf } from '../../src/pdf/open-pdf.js';
import { findSignatures, readDss } from '../../src/pdf/find-signatures.js';
import { readSignedData } from '../../src/pki/cms/read-signed-data.js';
import { startOpensslPki } from '../../test/fixtures/openssl-pki.js';
import { manyPagesPdf } from '../../test/fixtures/pdf-fixtures.js';
import { callApi, mustSucceed, type CallOptions } from '../../test/helpers/server.js';
import {
  cpuPinning,
  installExitHandlers,
  onCleanup,
  pinThisProcess,
  runBenchmark,
  type Placement,
} from '../api/processes.js';
import { processTicks, TICKS_PER_SECOND } from '../api/cpu.js';
import { ensureBuilt, logIn, startServer, type RunningServer } from '../api/server.js';
import { markdownTable } from '../markdown-table.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const TARGET_MS = 50;
const PASSWORD = 'bench-signer-password-1';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '40' },
    warmup: { type: 'string', default: '5' },
    pages: { type: 'string', default: '300' },
    signers: { type: 'string', default: '9' },
    compare: { type: 'string' },
    source: { type: 'string' },
    'cpu-prof': { type: 'string' },
    rebuild: { type: 'boolean', default: false },
  },
});
const requests = Number(values.requests);
const warmUp = Number(values.warmup);

function progress(message: string): void {
  process.stderr.write(`${message}\n`);
}

async function api(server: RunningServer, method: string, path: string, call: CallOptions = {}) {
  return mustSucceed(await callApi(server.baseUrl, method, path, call), `${method} ${path}`);
}

/**
 * The document to verify, made through the API of a server of this tree on `dataDir`: its id, and
 * its main file once the last signer has signed and the document is sealed.
 */
async function makeSignedDocument(
  dataDir: string,
  placement: Placement,
): Promise<{ id: string; pdf: Buffer }> {
  const pki = await startOpensslPki();
  const stopPki = onCleanup(() => pki.close());
  const server = await startServer({
    root: ROOT,
    placement,
    logLevel: 'warn',
    databaseUrl: undefined,
    databaseSchema: undefined,
    dataDir,
    env: { TSA_URL: pki.tsaUrl, REVOCATION_ALLOW_PRIVATE: 'true' },
  });
  try {
    const admin = await logIn(server.baseUrl);
    await api(server, 'PUT', '/settings/properties', { token: admin, body: { defaultPadesLevel: 'B-LT' } });
    const signers = Array.from({ length: Number(values.signers) }, (_, i) => `signer-${i + 1}`);
    for (const name of signers) {
      await api(server, 'POST', '/users', {
        token: admin,
        body: {
          name,
          email: `${name}@example.test`,
          displayName: `Signer ${name.slice(7)}`,
          password: PASSWORD,
        },
      });
    }
    const pdf = Buffer.from(manyPagesPdf(Number(values.pages)).bytes);
    const uploaded = await api(server, 'POST', '/files/saveFile', {
      token: admin,
      form: { file: { name: 'contract.pdf', type: 'application/pdf', bytes: pdf } },
    });
    const created = await api(server, 'POST', '/documents', {
      token: admin,
      body: { body: { documentTitle: 'Contract', pdfFile: { content: uploaded.body.file.id } } },
    });
    const id = created.body.results[0].documentId as string;
    await api(server, 'POST', '/share', {
      token: admin,
      body: { id, data: signers.map((shareTo) => ({ sharePurpose: 'sign', shareTo })) },
    });
    for (const [i, name] of signers.entries()) {
      const token = (await api(server, 'POST', '/login', { body: { name, password: PASSWORD } })).body.token;
      const doc = (await api(server, 'GET', `/documents/${id}`, { token })).body.results[0];
      // Each signature on its own page, spread over the document.
      const page = 1 + Math.floor((i * Number(values.pages)) / signers.length);
      await api(server, 'PUT', `/documents/sign/${doc._version}`, {
        token,
        body: {
          id,
          signatures: [
            {
              type: 'signature',
              pages: [page],
              position: { percentX: 0.1, percentY: 0.8, percentWidth: 0.25, percentHeight: 0.08 },
            },
          ],
        },
      });
      progress(`  ${name} signed (${i + 1}/${signers.length})`);
    }
    const doc = (await api(server, 'GET', `/documents/${id}`, { token: admin })).body.results[0];
    if (doc.workflow?.shareStateName !== 'completed')
      throw new Error(`the document is ${doc.workflow?.shareStateName}`);
    const file = await fetch(
      `${server.baseUrl}/api/v1/files/loadFile/hash/${doc.pdfFile.content}?token=${admin}`,
    );
    return { id, pdf: Buffer.from(await file.arrayBuffer()) };
  } finally {
    await server.stop();
    stopPki();
    await pki.close();
  }
}

/**
 * The document and the data directory of the server that made it: made now, or with `--source DIR`
 * made there once and reused by later runs (making it takes a minute or more).
 */
async function signedDocument(placement: Placement): Promise<{ id: string; pdf: Buffer; source: string }> {
  const kept = values.source ? resolve(values.source) : undefined;
  const made = kept && join(kept, 'bench-document.json');
  if (made && existsSync(made)) {
    const { id } = JSON.parse(readFileSync(made, 'utf8')) as { id: string };
    progress(`the document ${id}, made earlier in ${kept}`);
    return { id, pdf: readFileSync(join(kept, 'bench-document.pdf')), source: kept };
  }
  const source = kept ?? mkdtempSync(join(tmpdir(), 'signery-bench-verify-source-'));
  if (!kept) onCleanup(async () => rmSync(source, { recursive: true, force: true }));
  mkdirSync(source, { recursive: true });
  progress(
    `making the document: ${values.pages} pages, ${values.signers} signers and the completing seal, B-LT`,
  );
  const { id, pdf } = await makeSignedDocument(source, placement);
  if (made) {
    writeFileSync(join(source, 'bench-document.pdf'), pdf);
    writeFileSync(made, JSON.stringify({ id, pages: values.pages, signers: values.signers }));
  }
  return { id, pdf, source };
}

/** What the file holds, for the header. */
async function describeFile(pdf: Buffer): Promise<string> {
  const opened = await openPdf({ bytes: pdf });
  const signatures = findSignatures({ opened });
  const dss = readDss({ opened });
  const revisions = pdf.toString('latin1').split('%%EOF').length - 1;
  return `${(pdf.length / 1024 / 1024).toFixed(2)} MB, ${opened.pdf.getPageCount()} pages, ${revisions} revisions, ${signatures.length} signatures (${signatures.filter((s) => s.type === 'DocTimeStamp').length} document timestamps); DSS: ${dss?.certificates.length ?? 0} certificates, ${dss?.crls.length ?? 0} CRLs, ${dss?.ocsps.length ?? 0} OCSP responses`;
}

/**
 * The floor: what any verifier must do at least, in this process: hash each signature's two byte
 * ranges (the whole revision it signs) and verify its signature value over its signed attributes.
 * Everything it needs is read beforehand, untimed. Answers the median of 20 runs, in ms.
 */
async function floorMs(pdf: Buffer): Promise<number> {
  const opened = await openPdf({ bytes: pdf });
  const work = findSignatures({ opened })
    .filter((s) => s.type === 'Sig')
    .map((signature) => {
      const cms = readSignedData({ der: signature.contents });
      const [a = 0, b = 0, c = 0, d = 0] = signature.byteRange;
      return {
        ranges: [pdf.subarray(a, a + b), pdf.subarray(c, c + d)],
        signedAttributes: cms.signedAttributes!,
        signatureValue: cms.signatureValue,
        key: new X509Certificate(cms.signerCertificate!).publicKey,
      };
    });
  const times: number[] = [];
  for (let run = 0; run < 20; run++) {
    const started = performance.now();
    for (const signature of work) {
      const hash = createHash('sha256');
      for (const range of signature.ranges) hash.update(range);
      hash.digest();
      if (!verifySignature('sha256', signature.signedAttributes, signature.key, signature.signatureValue))
        throw new Error('a signature value does not verify');
    }
    times.push(performance.now() - started);
  }
  return percentile(times, 50);
}

function percentile(times: number[], p: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

interface Build {
  label: string;
  server: RunningServer;
  token: string;
  dataDir: string;
  times: { get: number[]; post: number[] };
  /** The server's CPU seconds over each route's measured requests. */
  cpu: { get: number; post: number };
  /** The last report of each route, `validationTime` left out. */
  reports: { get?: string; post?: string };
}

async function startBuild(label: string, root: string, source: string, placement: Placement): Promise<Build> {
  await ensureBuilt(root, values.rebuild && root === ROOT);
  const dataDir = mkdtempSync(join(tmpdir(), 'signery-bench-verify-'));
  cpSync(source, dataDir, { recursive: true });
  onCleanup(async () => rmSync(dataDir, { recursive: true, force: true }));
  const profile = values['cpu-prof'] && root === ROOT ? resolve(values['cpu-prof']) : undefined;
  const server = await startServer({
    root,
    placement,
    logLevel: 'warn',
    databaseUrl: undefined,
    databaseSchema: undefined,
    dataDir,
    // The profile is written when node exits: SIGTERM's drain must end before the kill that follows it.
    ...(profile
      ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profile}`], env: { SHUTDOWN_DRAIN_SECONDS: '0' } }
      : {}),
  });
  return {
    label,
    server,
    token: await logIn(server.baseUrl),
    dataDir,
    times: { get: [], post: [] },
    cpu: { get: 0, post: 0 },
    reports: {},
  };
}

/**
 * One timed verification: its time in ms, the server's CPU time in seconds (/proc, in ticks of 10 ms:
 * meaningful summed over many requests), and its report without `validationTime`.
 */
async function timed(
  pid: number,
  request: () => Promise<Response>,
): Promise<{ ms: number; cpu: number; report: string }> {
  const ticks = processTicks(pid);
  const started = performance.now();
  const response = await request();
  const text = await response.text();
  const ms = performance.now() - started;
  const cpu = (processTicks(pid) - ticks) / TICKS_PER_SECOND;
  if (response.status !== 200) throw new Error(`verify answered ${response.status}: ${text.slice(0, 300)}`);
  const { validationTime: _time, ...report } = JSON.parse(text) as Record<string, unknown>;
  return { ms, cpu, report: JSON.stringify(report) };
}

async function verifyBoth(build: Build, id: string, pdf: Buffer, record: boolean): Promise<void> {
  const base = `${build.server.baseUrl}/api/v1`;
  const pid = build.server.pid!;
  const get = await timed(pid, () => fetch(`${base}/documents/${id}/verify?token=${build.token}`));
  const form = new FormData();
  form.append('file', new Blob([pdf], { type: 'application/pdf' }), 'contract.pdf');
  const post = await timed(pid, () =>
    fetch(`${base}/verify?token=${build.token}`, { method: 'POST', body: form }),
  );
  if (!record) return;
  build.times.get.push(get.ms);
  build.times.post.push(post.ms);
  build.cpu.get += get.cpu;
  build.cpu.post += post.cpu;
  build.reports = { get: get.report, post: post.report };
}

async function main(): Promise<void> {
  installExitHandlers();
  const pinning = cpuPinning(false);
  console.log(
    `machine: ${cpus()[0]?.model ?? 'unknown'}, ${availableParallelism()} CPUs, Node ${process.version}; load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    pinning.pinned ? 'servers on CPU 0, this client on CPU 1' : `not pinned (${pinning.notes.join('; ')})`,
  );
  await ensureBuilt(ROOT, values.rebuild);
  const { id, pdf, source } = await signedDocument(pinning.server);
  console.log(`file: ${await describeFile(pdf)}`);
  if (pinning.pinned) pinThisProcess('1');
  const builds = [await startBuild('this tree', ROOT, source, pinning.server)];
  if (values.compare)
    builds.push(
      await startBuild(`compare (${values.compare})`, resolve(values.compare), source, pinning.server),
    );
  try {
    for (const build of builds) for (let i = 0; i < warmUp; i++) await verifyBoth(build, id, pdf, false);
    for (let i = 0; i < requests; i++) {
      for (const build of builds) await verifyBoth(build, id, pdf, true);
      if ((i + 1) % 10 === 0) progress(`  round ${i + 1}/${requests}`);
    }
    const floor = await floorMs(pdf);
    const rows = builds.flatMap((build) =>
      (['get', 'post'] as const).map((route) => {
        const times = build.times[route];
        const p50 = percentile(times, 50);
        return [
          build.label,
          route === 'get' ? 'GET /documents/:id/verify' : 'POST /verify (upload)',
          p50.toFixed(1),
          percentile(times, 99).toFixed(1),
          ((build.cpu[route] * 1000) / times.length).toFixed(1),
          floor.toFixed(1),
          p50 <= TARGET_MS ? 'met' : 'MISSED',
        ];
      }),
    );
    console.log(
      `\n${requests} requests per route and build, one at a time (load average now ${loadavg()[0]!.toFixed(2)})`,
    );
    console.log(
      markdownTable(
        [
          'build',
          'route',
          'p50 ms',
          'p99 ms',
          'server CPU ms/req',
          'floor ms',
          `target p50 ≤ ${TARGET_MS} ms`,
        ],
        rows,
      ),
    );
    console.log(
      `floor: SHA-256 of every signature's byte ranges and one RSA verification per signature, in this process (median of 20)`,
    );
    if (builds.length > 1) {
      const [ours, theirs] = builds;
      const same = ours!.reports.get === theirs!.reports.get && ours!.reports.post === theirs!.reports.post;
      console.log(`reports of the two builds: ${same ? 'identical (but for validationTime)' : 'DIFFERENT'}`);
      if (!same) process.exitCode = 1;
    }
  } finally {
    for (const build of builds) await build.server.stop();
  }
}

runBenchmark(main);

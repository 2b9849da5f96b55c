/**
 * Anchor search: `npm run bench:anchors [-- --runs 10] [-- --re2 /tmp/re2try/node_modules/re2] [-- --no-server]`.
 *
 * 1. Engine: findAnchors on a generated 100-page PDF with a literal anchor and a regular expression
 *    (spec: Anchor rules), time per search.
 * 2. Engines for user patterns on the same text and on the worst case (`(a+)+$` over `a…a!`): re2js
 *    (what Signery runs), V8's RegExp in a worker killed after a time limit, and the native `re2`
 *    package when `--re2` names an installed copy (it is not a dependency of the project).
 * 3. Server: a real server (`node dist/main.js`), /healthz latency from one client with no load, then
 *    the same while another client sends worst-case anchor uploads (backtracking patterns; one page of
 *    29,000 glyphs on one line, whose text extraction outlasts the search time limit), side by side.
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { PDF } from '@libpdf/core';
import { RE2JS } from 're2js';
import { findAnchors } from '../../src/pdf/anchors.js';
import { crowdedLinePdf, textPdf } from '../../test/fixtures/hostile-pdfs.js';
import { manyPagesPdf } from '../../test/fixtures/pdf-fixtures.js';
import { installExitHandlers, runCleanups } from '../api/processes.js';
import { ensureBuilt, logIn, startServer } from '../api/server.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    re2: { type: 'string' },
    'no-server': { type: 'boolean', default: false },
    uploads: { type: 'string', default: '3' },
  },
});
const runs = Math.max(3, Number(values.runs));

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const ms = (n: number): string => `${n.toFixed(n < 10 ? 2 : 0)} ms`;

// 1. findAnchors on the 100-page PDF.
const { bytes } = manyPagesPdf(100);
const anchors = [
  { id: 'literal', text: 'dolor sit amet' },
  { id: 'pattern', regexp: 'ANCHOR-\\d+' },
];
await findAnchors({ pdf: bytes, anchors }); // warm-up
const times: number[] = [];
let fields = 0;
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  const result = await findAnchors({ pdf: bytes, anchors });
  times.push(performance.now() - t0);
  fields = result.reduce((n, r) => n + r.fields.length, 0);
  process.stderr.write(`\r  run ${i + 1}/${runs}`);
}
process.stderr.write('\n');
times.sort((a, b) => a - b);
console.log(`Anchors: 100 pages (${(bytes.length / 1024).toFixed(0)} KB), 2 anchors, ${fields} fields found`);
console.log(
  `  median ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms, min ${times[0]!.toFixed(1)} ms, max ${times.at(-1)!.toFixed(1)} ms (${runs} runs)`,
);

// 2. Engines, on the text of the same 100 pages and on the worst case.
const pdf = await PDF.load(bytes);
const pageTexts = pdf.getPages().map((page) =>
  page
    .extractText()
    .lines.flatMap((l) => l.spans.flatMap((s) => s.chars.map((c) => c.char)))
    .join(''),
);
const worst = { pattern: '(a+)+$', texts: [`${'a'.repeat(32)}!`] };
const cases = [
  { name: 'literal (dolor sit amet)', pattern: 'dolor sit amet', texts: pageTexts },
  { name: 'pattern (ANCHOR-\\d+)', pattern: 'ANCHOR-\\d+', texts: pageTexts },
  { name: 'worst: (a+)+$ on 32 × a then !', ...worst },
  {
    // 30 pages of 40 lines `a…a!`: the text of the server part's worst-case upload.
    name: 'worst: (a|aa)+$ on 30 pages of a…a!',
    pattern: '(a|aa)+$',
    texts: Array.from({ length: 30 }, () => Array.from({ length: 40 }, () => `${'a'.repeat(80)}!`).join(' ')),
  },
];
type Engine = (pattern: string, texts: string[]) => Promise<number>;
const engines: [string, Engine][] = [
  [
    're2js',
    async (pattern, texts) => {
      const re = RE2JS.compile(pattern);
      let n = 0;
      for (const text of texts) {
        const m = re.matcher(text);
        while (m.find()) n++;
      }
      return n;
    },
  ],
];
if (values.re2) {
  const RE2 = createRequire(import.meta.url)(values.re2) as new (p: string, f: string) => RegExp;
  engines.push([
    're2 (native)',
    async (pattern, texts) => {
      const re = new RE2(pattern, 'g');
      let n = 0;
      for (const text of texts) {
        re.lastIndex = 0;
        while (re.exec(text)) n++;
      }
      return n;
    },
  ]);
}
const WORKER_LIMIT_MS = 1_000;
const workerSource = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ pattern, texts }) => {
  const re = new RegExp(pattern, 'g');
  let n = 0;
  for (const text of texts) { re.lastIndex = 0; while (re.exec(text)) n++; }
  parentPort.postMessage(n);
});`;
engines.push([
  `V8 RegExp in a worker (killed after ${WORKER_LIMIT_MS} ms)`,
  (pattern, texts) =>
    new Promise((resolve) => {
      // A fresh worker per search, as a time limit needs: terminating is the only way to stop V8.
      const worker = new Worker(workerSource, { eval: true });
      const timer = setTimeout(() => void worker.terminate().then(() => resolve(-1)), WORKER_LIMIT_MS);
      worker.once('message', (n: number) => {
        clearTimeout(timer);
        void worker.terminate();
        resolve(n);
      });
      worker.postMessage({ pattern, texts });
    }),
]);
console.log(
  `\nEngines for user patterns (median of ${runs}; text of the 100 pages: ${pageTexts.join('').length} characters)`,
);
for (const c of cases) {
  for (const [name, engine] of engines) {
    await engine(c.pattern, c.texts);
    const t: number[] = [];
    let found = 0;
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      found = await engine(c.pattern, c.texts);
      t.push(performance.now() - t0);
    }
    console.log(
      `  ${c.name.padEnd(38)} ${name.padEnd(44)} ${ms(median(t)).padStart(10)}  ${found < 0 ? 'killed at the limit' : `${found} matches`}`,
    );
  }
}

// 3. /healthz from one client while another sends worst-case anchor uploads, on a real server.
if (!values['no-server']) {
  installExitHandlers();
  const root = new URL('../..', import.meta.url).pathname;
  await ensureBuilt(root, false);
  const server = await startServer({
    root,
    placement: { prefix: [], niceness: undefined },
    logLevel: 'warn',
    databaseUrl: undefined,
    databaseSchema: undefined,
  });
  try {
    const token = await logIn(server.baseUrl);
    const healthz = async (until: () => boolean, minimum: number): Promise<number[]> => {
      const latencies: number[] = [];
      while (latencies.length < minimum || !until()) {
        const t0 = performance.now();
        const response = await fetch(`${server.baseUrl}/healthz`);
        await response.arrayBuffer();
        latencies.push(performance.now() - t0);
      }
      return latencies;
    };
    const baseline = await healthz(() => true, 500);
    // The most anchor work one request may ask for (ANCHOR_LIMITS): worst patterns over the text.
    const pages = 30;
    const worstPdf = textPdf(
      Array.from({ length: 40 }, () => `${'a'.repeat(80)}!`),
      pages,
    );
    const worstAnchors = Array.from({ length: 30 }, (_, i) => ({
      id: `w${i}`,
      regexp: ['(a+)+$', '(a|aa)+$', '(a|a?)+$'][i % 3],
    }));
    const uploads = Math.max(1, Number(values.uploads));
    /** /healthz latencies from one client while another sends `uploads` of `pdf` with `anchors`. */
    const underLoad = async (label: string, pdf: Buffer, anchors: unknown[]) => {
      let busy = true;
      const anchorTimes: number[] = [];
      const statuses: number[] = [];
      const load = (async () => {
        for (let i = 0; i < uploads; i++) {
          const form = new FormData();
          form.set('signatureAnchors', JSON.stringify(anchors));
          form.set('file', new Blob([pdf], { type: 'application/pdf' }), 'worst.pdf');
          const t0 = performance.now();
          const response = await fetch(`${server.baseUrl}/api/v1/files/saveFile?token=${token}`, {
            method: 'POST',
            body: form,
          });
          await response.arrayBuffer();
          anchorTimes.push(performance.now() - t0);
          statuses.push(response.status);
          process.stderr.write(`\r  ${label} upload ${i + 1}/${uploads}: ${response.status}`);
        }
        busy = false;
      })();
      const latencies = await healthz(() => !busy, 1);
      await load;
      process.stderr.write('\n');
      return {
        latencies,
        summary: `answered ${statuses.join(', ')} in ${anchorTimes.map((t) => ms(t)).join(', ')}`,
      };
    };
    const patterns = await underLoad('worst-pattern', worstPdf, worstAnchors);
    // Text extraction's own worst case: one page of 29,000 glyphs on one line (1 MiB of content, a
    // few KB on the wire), searched in a worker and refused at the time limit.
    const crowded = await underLoad('crowded-line', crowdedLinePdf(1024 * 1024), [
      { id: 'a1', text: 'SIGN_HERE' },
    ]);
    console.log(
      `\nServer: GET /healthz from one client; ${uploads} worst-case anchor uploads, one after the other, from another:\n` +
        `  patterns: ${pages} pages of "a…a!", ${worstAnchors.length} anchors like (a+)+$: ${patterns.summary}\n` +
        `  crowded line: one page, 29,000 glyphs on one line, one text anchor: ${crowded.summary}`,
    );
    console.log('  /healthz                 requests   p50        p99        max');
    for (const [label, xs] of [
      ['no load (baseline)', baseline],
      ['during pattern uploads', patterns.latencies],
      ['during crowded-line', crowded.latencies],
    ] as const) {
      console.log(
        `  ${label.padEnd(24)} ${String(xs.length).padStart(6)} ${ms(pct(xs, 50)).padStart(10)} ${ms(pct(xs, 99)).padStart(10)} ${ms(Math.max(...xs)).padStart(10)}`,
      );
    }
  } finally {
    await server.stop();
    await runCleanups();
  }
}

/**
 * The signer's first page on a slow phone: `npm run bench:page [-- --runs 5 --pages 20]`.
 *
 * Issue 25: "the first page visible within 2 s on a slow phone profile". One run starts the built
 * server (`node dist/main.js`, SQLite, a fresh data directory, pinned to CPU 0 when it can be), shares a
 * generated contract (pages full of text) with an external recipient, reads the link from the invitation mail the server wrote
 * (DATA_DIR/mail), and opens it in Debian's chromium (pinned to CPU 1) as a phone (390×844, touch,
 * 3× pixels) behind the slow-phone profile Lighthouse uses for mobile: 150 ms round trips, 1.6 Mbit/s
 * down, 750 kbit/s up, and the CPU slowed 4×. It measures, from navigation start, the time until the
 * page's first PDF page is painted (`[data-page="1"][data-rendered="true"]`), on a cold cache (a new
 * visitor) and on a warm one (the same visitor coming back), and the bytes that crossed the network
 * before it. Beside them, in the same run and profile:
 * - the floor: those bytes at the profile's bandwidth plus one round trip per request chain (DNS-free
 *   loopback, so connection set-up is one round trip), i.e. what no page could beat with these bytes;
 * - a static page: the time the server's own `/` (a small HTML page, no script) takes to load, which
 *   bounds what the profile alone costs a page.
 * Never asserted by tests: machines differ.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Browser, CDPSession, Page } from 'playwright-core';
import { buildPdf } from '../../test/fixtures/pdf-fixtures.js';
import { invitationLink, withServerAndBrowser } from '../api/browser.js';
import { logIn } from '../api/server.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    pages: { type: 'string', default: '20' },
    rebuild: { type: 'boolean', default: false },
    // Lists each request of the last cold visit: what the time is spent waiting for.
    verbose: { type: 'boolean', default: false },
  },
});
const RUNS = Math.max(1, Number(values.runs));
const PAGES = Math.max(1, Number(values.pages));
const TARGET_MS = 2_000;
/** Lighthouse's mobile profile ("slow 4G" on a mid-range phone). */
const PROFILE = { latencyMs: 150, downBytesPerS: (1.6e6 * 0.9) / 8, upBytesPerS: (750e3 * 0.9) / 8, cpu: 4 };
const ROOT = join(import.meta.dirname, '..', '..');

interface Visit {
  ms: number;
  bytes: number;
  requests: number;
}

async function throttled(page: Page, cache: boolean): Promise<CDPSession> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: !cache });
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: PROFILE.latencyMs,
    downloadThroughput: PROFILE.downBytesPerS,
    uploadThroughput: PROFILE.upBytesPerS,
  });
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: PROFILE.cpu });
  return cdp;
}

/**
 * Bytes received over the network (encoded, headers included; not from the cache) and the requests,
 * the pdf.js worker's script among them (a page's CDP session does not see it; Playwright's events do).
 */
function countTransfer(page: Page): () => { bytes: number; requests: number } {
  let bytes = 0;
  let requests = 0;
  const started = Date.now();
  page.on('requestfinished', (request) => {
    void Promise.all([request.sizes(), request.response()]).then(([sizes, response]) => {
      // A worker's script reports no body size, its Content-Length (of the compressed body) does; what
      // came from the cache reports a negative one.
      if (sizes.responseBodySize < 0) return;
      const length = Number(response?.headers()['content-length'] ?? 0);
      const received = Math.max(sizes.responseBodySize, length) + sizes.responseHeadersSize;
      if (received <= 0) return;
      bytes += received;
      requests++;
      if (values.verbose) {
        const url = request
          .url()
          .replace(/^https?:\/\/[^/]+/, '')
          .slice(0, 70);
        process.stderr.write(
          `    ${String(Date.now() - started).padStart(6)} ms ${String(received).padStart(8)} B  ${url}\n`,
        );
      }
    });
  });
  return () => ({ bytes, requests });
}

/** One visit: for each selector in turn, the time from navigation until it showed, and the bytes by then. */
async function visit(browser: Browser, url: string, ready: string[], warm: boolean): Promise<Visit[]> {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 3,
    isMobile: true,
    hasTouch: true,
  });
  try {
    const page = await context.newPage();
    if (warm) {
      // The same visitor's first visit fills the cache; only the second is measured.
      await page.goto(url);
      for (const selector of ready) await page.waitForSelector(selector, { timeout: 60_000 });
    }
    await throttled(page, true);
    const transfer = countTransfer(page);
    const started = Date.now();
    await page.goto(url, { waitUntil: 'commit' });
    const visits: Visit[] = [];
    for (const selector of ready) {
      await page.waitForSelector(selector, { timeout: 120_000 });
      visits.push({ ms: Date.now() - started, ...transfer() });
    }
    return visits;
  } finally {
    await context.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
}

const WORDS = (
  'agreement party hereby shall terms service provider customer payment within days notice ' +
  'termination liability confidential information obligations law jurisdiction'
).split(' ');

/**
 * A contract as dense as real ones: every page full of 10-point text (56 lines of ≈ 95 letters), the
 * words picked by a fixed sequence so that every run draws the same pages.
 */
function contractPdf(pages: number): Uint8Array {
  let seed = 1;
  const word = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return WORDS[seed % WORDS.length]!;
  };
  const line = () => {
    let text = '';
    while (text.length < 90) text += `${word()} `;
    return text.trim();
  };
  return buildPdf({
    pages: Array.from({ length: pages }, (_, page) => ({
      texts: [
        { text: `SERVICE AGREEMENT, page ${page + 1}`, x: 56, y: 750, size: 14 },
        ...Array.from({ length: 56 }, (_, i) => ({ text: line(), x: 56, y: 720 - i * 12 })),
      ],
    })),
  }).bytes;
}

async function shareLink(baseUrl: string, dataDir: string): Promise<string> {
  const token = await logIn(baseUrl);
  const form = new FormData();
  const pdf = contractPdf(PAGES);
  form.append('file', new Blob([pdf], { type: 'application/pdf' }), 'contract.pdf');
  const api = async (method: string, path: string, body: unknown) => {
    const response = await fetch(`${baseUrl}/api/v1${path}?token=${token}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  const uploaded = await fetch(`${baseUrl}/api/v1/files/saveFile?token=${token}`, {
    method: 'POST',
    body: form,
  });
  const { file } = (await uploaded.json()) as { file: { id: string } };
  const created = await api('POST', '/documents', {
    body: { documentTitle: 'Service agreement', pdfFile: { content: file.id } },
  });
  const id = (created.results as { documentId: string }[])[0]?.documentId;
  await api('POST', '/share', { id, data: [{ sharePurpose: 'sign', shareTo: 'phone@example.org' }] });
  return `${baseUrl}/s/${await invitationLink(dataDir, 'phone@example.org')}`;
}

withServerAndBrowser(
  ROOT,
  async (server, browser) => {
    const link = await shareLink(server.baseUrl, server.dataDir);
    // The first page is visible once the server's image of it shows (GET /share/document/preview),
    // or pdf.js drew it first; then pdf.js draws it itself (text layer, fields, zoom).
    const drawn = '[data-page="1"][data-rendered="true"]';
    const shown = `.page-preview-image[data-shown="true"], ${drawn}`;
    const cold = { shown: [] as Visit[], drawn: [] as Visit[] };
    const warm = { shown: [] as Visit[], drawn: [] as Visit[] };
    const plain: Visit[] = [];
    for (let i = 0; i < RUNS; i++) {
      for (const [visits, isWarm] of [
        [cold, false],
        [warm, true],
      ] as const) {
        const [first, pdfjs] = await visit(browser, link, [shown, drawn], isWarm);
        visits.shown.push(first!);
        visits.drawn.push(pdfjs!);
      }
      plain.push(...(await visit(browser, `${server.baseUrl}/`, ['h1'], false)));
      process.stderr.write(`\r  run ${i + 1}/${RUNS}   `);
    }
    process.stderr.write('\n');
    const row = (label: string, visits: Visit[], target: string) => {
      const bytes = median(visits.map((v) => v.bytes));
      const requests = median(visits.map((v) => v.requests));
      // Bandwidth for the bytes, plus the round trips of the longest request chain: HTML → script →
      // the document's JSON → the PDF (and the connection itself), each at least one round trip.
      const floor = (bytes / PROFILE.downBytesPerS) * 1000 + PROFILE.latencyMs * Math.min(requests, 5);
      return [
        label.padEnd(36),
        `${median(visits.map((v) => v.ms))} ms`.padStart(9),
        `${(bytes / 1024).toFixed(0)} KiB`.padStart(10),
        String(requests).padStart(6),
        `${floor.toFixed(0)} ms`.padStart(10),
        target.padStart(8),
      ].join('  ');
    };
    console.log(
      `\nSigner page, first PDF page visible (median of ${RUNS}; ${PAGES}-page PDF; phone 390×844; ` +
        `${PROFILE.latencyMs} ms RTT, ${((PROFILE.downBytesPerS * 8) / 1e6).toFixed(2)} Mbit/s down, CPU ÷${PROFILE.cpu}; ` +
        `load ${loadavg()[0]?.toFixed(2)})\n`,
    );
    console.log(
      [
        'case'.padEnd(36),
        'time'.padStart(9),
        'bytes'.padStart(10),
        'reqs'.padStart(6),
        'floor'.padStart(10),
        'target'.padStart(8),
      ].join('  '),
    );
    console.log(row('new visitor: first page shown', cold.shown, `${TARGET_MS} ms`));
    console.log(row('new visitor: drawn by pdf.js', cold.drawn, '—'));
    console.log(row('returning: first page shown', warm.shown, `${TARGET_MS} ms`));
    console.log(row('returning: drawn by pdf.js', warm.drawn, '—'));
    console.log(row('static page / (same profile)', plain, '—'));
  },
  { rebuild: values.rebuild },
);

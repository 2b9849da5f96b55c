/**
 * The screenshots of docs/signers-page.md: `npm run screenshots` writes
 * docs/screenshots/<state>-<size>.png, each state of the signer's page and of the public verification
 * page at phone (390×844) and desktop (1280×800) size, from the built server (`node dist/main.js`,
 * SQLite, a fresh data directory) in Debian's chromium. Scenarios are made through the API, as an
 * integrator would make them.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { manyPagesPdf } from '../test/fixtures/pdf-fixtures.js';
import { invitationLink, withServerAndBrowser } from '../bench/api/browser.js';
import { logIn } from '../bench/api/server.js';

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, 'docs', 'screenshots');
const SIZES = {
  phone: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
  desktop: { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, isMobile: false, hasTouch: false },
} as const;
type Size = keyof typeof SIZES;
const PASSWORD = 'screenshot-password-1';

class Api {
  constructor(
    readonly base: string,
    readonly token: string,
  ) {}

  async call(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.base}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  }

  async document(title: string, pages: number): Promise<string> {
    const form = new FormData();
    form.append('file', new Blob([manyPagesPdf(pages).bytes], { type: 'application/pdf' }), `${title}.pdf`);
    const uploaded = await fetch(`${this.base}/api/v1/files/saveFile`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}` },
      body: form,
    });
    const { file } = (await uploaded.json()) as { file: { id: string } };
    const created = await this.call('POST', '/documents', {
      body: { documentTitle: title, pdfFile: { content: file.id } },
    });
    return (created.results as { documentId: string }[])[0]?.documentId ?? '';
  }
}

async function shot(page: Page, state: string, size: Size): Promise<void> {
  // Let the page settle (fonts, the PDF's canvases) before the picture.
  await page.waitForLoadState('networkidle');
  await page.screenshot({ path: join(OUT, `${state}-${size}.png`) });
  process.stderr.write(`  ${state}-${size}.png\n`);
}

async function pdfShown(page: Page): Promise<void> {
  await page.locator('.viewer[data-state="ready"]').waitFor({ timeout: 30_000 });
  await page.locator('.page[data-rendered]').first().waitFor({ timeout: 30_000 });
}

async function journey(browser: Browser, size: Size, api: Api, dataDir: string): Promise<void> {
  const context = await browser.newContext({ ...SIZES[size], locale: 'en-GB' });
  const page = await context.newPage();
  try {
    // 1. A protected share: the recipient proves they hold the password.
    const locked = await api.document(`Rental agreement (${size})`, 2);
    const lockedTo = `lena.${size}@example.org`;
    await api.call('POST', '/share', {
      id: locked,
      data: [
        {
          sharePurpose: 'sign',
          shareTo: lockedTo,
          password: 'correct horse',
          message: 'Hi Lena, please sign by Friday.',
        },
      ],
    });
    await page.goto(`${api.base}/s/${await invitationLink(dataDir, lockedTo)}`);
    await page.getByLabel('Password').waitFor();
    await shot(page, '1-unlock', size);
    await page.getByLabel('Password').fill('correct horse');
    await page.getByRole('button', { name: 'Open the document' }).click();
    await pdfShown(page);
    // 2. The document, its field and the action bar.
    await shot(page, '2-document', size);
    // 3. The signature, drawn.
    await page
      .getByRole('button', { name: /^Signature, required/ })
      .first()
      .click();
    const pad = page.getByRole('img', { name: /Drawing area/ });
    await pad.waitFor();
    const box = await pad.boundingBox();
    if (box) {
      await page.mouse.move(box.x + box.width * 0.15, box.y + box.height * 0.6);
      await page.mouse.down();
      for (let i = 1; i <= 24; i++) {
        const x = box.x + box.width * (0.15 + (0.7 * i) / 24);
        const y = box.y + box.height * (0.6 - 0.25 * Math.sin((i / 24) * Math.PI * 3));
        await page.mouse.move(x, y);
      }
      await page.mouse.up();
    }
    await shot(page, '3-signature', size);
    await page.getByRole('button', { name: 'Use it' }).click();
    await page
      .getByRole('button', { name: /^Signature, done/ })
      .first()
      .waitFor();
    await page.getByRole('button', { name: 'Sign the document' }).click();
    // 4. The outcome, and what the signer can do next.
    await page.getByRole('heading', { name: 'Thank you, you have signed' }).waitFor();
    await pdfShown(page);
    await shot(page, '4-signed', size);

    // 5–6. A colleague with an account: sign in, what waits for them.
    const memo = await api.document(`Board resolution (${size})`, 3);
    await api.call('POST', '/share', { id: memo, data: [{ sharePurpose: 'approve', shareTo: 'ivy' }] });
    await page.goto(`${api.base}/sign`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await shot(page, '5-sign-in', size);
    await page.getByLabel('User name').fill('ivy');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Waiting for you' }).waitFor();
    await shot(page, '6-inbox', size);

    // 7. Anyone checks a signed PDF on the public verification page.
    const read = await api.call('GET', `/documents/${locked}`);
    const signed = (read.results as { pdfFile: { content: string } }[])[0];
    const bytes = await (
      await fetch(`${api.base}/api/v1/files/loadFile/hash/${signed?.pdfFile.content ?? ''}`, {
        headers: { authorization: `Bearer ${api.token}` },
      })
    ).arrayBuffer();
    await page.goto(`${api.base}/verify`);
    await page.getByRole('heading', { name: 'Check a signed PDF' }).waitFor();
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: /^Choose a PDF/ }).click();
    await (
      await chooser
    ).setFiles({ name: 'rental-agreement.pdf', mimeType: 'application/pdf', buffer: Buffer.from(bytes) });
    await page.locator('[data-verdict]').waitFor({ timeout: 30_000 });
    await shot(page, '7-verify', size);
  } catch (error) {
    const failed = join(ROOT, 'test-artifacts', `screenshots-failed-${size}.png`);
    await mkdir(dirname(failed), { recursive: true });
    await page.screenshot({ path: failed }).catch(() => undefined);
    throw new Error(`${error instanceof Error ? error.message : String(error)} (the page then: ${failed})`);
  } finally {
    await context.close();
  }
}

withServerAndBrowser(ROOT, async (server, browser) => {
  await mkdir(OUT, { recursive: true });
  const admin = new Api(server.baseUrl, await logIn(server.baseUrl));
  for (const [name, displayName] of [
    ['olivia', 'Olivia Owner'],
    ['ivy', 'Ivy Internal'],
  ])
    await admin.call('POST', '/users', {
      name,
      email: `${name}@example.org`,
      displayName,
      password: PASSWORD,
    });
  const login = await fetch(`${server.baseUrl}/api/v1/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'olivia', password: PASSWORD }),
  });
  const api = new Api(server.baseUrl, ((await login.json()) as { token: string }).token);
  for (const size of Object.keys(SIZES) as Size[]) await journey(browser, size, api, server.dataDir);
  await writeFile(join(OUT, '.gitattributes'), '*.png binary\n');
});

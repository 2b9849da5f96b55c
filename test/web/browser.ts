import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/**
 * A suite run in Debian's chromium, one browser for all its tests (launched before them, closed after),
 * skipped with a note where chromium is not installed. `browser()` is that browser.
 */
export function describeInChromium(name: string, body: (browser: () => Browser) => void): void {
  describe(
    name,
    {
      skip: hasChromium
        ? false
        : `Debian’s chromium is not installed at ${CHROMIUM} (apt-get install chromium)`,
    },
    () => {
      let browser: Browser | undefined;
      before(async () => {
        browser = await launchChromium();
      });
      after(async () => {
        await browser?.close();
      });
      body(() => {
        if (!browser) throw new Error('chromium is not running yet: use browser() inside a test');
        return browser;
      });
    },
  );
}

/** Debian's chromium (DESIGN: browser tests drive it with playwright-core; never a downloaded browser). */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** Where every step's screenshots go (git-ignored; CI keeps the folder). */
export const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'web');

export const SIZES = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1280, height: 800 },
} as const;
export type Size = keyof typeof SIZES;

/** The built page; built here when missing, so the tests also run before `npm run build`. */
export function ensureBuiltPage(): void {
  if (existsSync(join(import.meta.dirname, '..', '..', 'dist', 'web', 'index.html'))) return;
  const built = spawnSync('npm', ['run', 'build:web', '--silent'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('npm run build:web failed');
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** The WCAG 2.2 A and AA rules of axe-core. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // The machine's network is closed: without these, Chromium keeps trying Google's services.
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * One scenario in its own browser context at one size, recording every step's screenshot at both
 * sizes, and every page error and Content-Security-Policy violation (which must stay empty).
 */
export class Session {
  readonly page: Page;
  readonly context: BrowserContext;
  readonly size: Size;
  readonly problems: string[] = [];
  readonly #dir: string;
  #shots = 0;

  private constructor(context: BrowserContext, page: Page, size: Size, dir: string) {
    this.context = context;
    this.page = page;
    this.size = size;
    this.#dir = dir;
    page.on('pageerror', (error) => this.problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      const text = message.text();
      if (/Content.Security.Policy|Refused to/i.test(text)) this.problems.push(`CSP: ${text}`);
      else if (message.type() === 'error' && !/status of (4\d\d)/.test(text))
        this.problems.push(`console: ${text}`);
    });
  }

  /** `deviceScaleFactor`: a phone's real density (3) where a test measures what a finger meets. */
  static async open(
    browser: Browser,
    name: string,
    size: Size,
    options: { deviceScaleFactor?: number } = {},
  ): Promise<Session> {
    const dir = join(ARTIFACTS, name);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const context = await browser.newContext({
      viewport: SIZES[size],
      deviceScaleFactor: options.deviceScaleFactor ?? 1,
      hasTouch: size === 'phone',
      isMobile: false,
      acceptDownloads: true,
      locale: 'en-GB',
    });
    context.setDefaultTimeout(30_000);
    return new Session(context, await context.newPage(), size, dir);
  }

  /** Waits until the document view has stopped rendering (or there is none). */
  async settle(): Promise<void> {
    await this.until(
      `new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => {
        const viewer = document.querySelector('.viewer');
        resolve(!viewer || viewer.dataset.state !== 'ready' || viewer.dataset.pending === '0' || viewer.dataset.pending === undefined);
      })))`,
    );
  }

  /**
   * Waits until `expression` (page code as text: the suite's TypeScript has no DOM types) is truthy.
   * Polled with page.evaluate: Playwright's waitForFunction evaluates only its first try that way and
   * polls with eval() in the page, which our pages' Content-Security-Policy (no 'unsafe-eval') refuses.
   */
  async until(expression: string, timeout = 30_000): Promise<void> {
    const end = Date.now() + timeout;
    while (!(await this.page.evaluate<unknown>(expression))) {
      if (Date.now() > end) throw new Error(`Timed out after ${timeout} ms waiting for: ${expression}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /**
   * Screenshots of the current step at the session's size and at the other one. `axe: false` for
   * pages that are not ours (an identity provider's sign-in, a server's JSON answer).
   */
  async capture(step: string, options: { axe?: boolean } = {}): Promise<void> {
    if (options.axe !== false) await this.checkAccessibility(step);
    this.#shots += 1;
    const prefix = `${String(this.#shots).padStart(2, '0')}-${step}`;
    const other: Size = this.size === 'phone' ? 'desktop' : 'phone';
    for (const size of [this.size, other]) {
      if (size !== this.size) await this.page.setViewportSize(SIZES[size]);
      await this.settle();
      await this.page.screenshot({ path: join(this.#dir, `${prefix}.${size}.png`) });
    }
    await this.page.setViewportSize(SIZES[this.size]);
    await this.settle();
  }

  /**
   * Checks the current screen with axe-core (WCAG 2.2 A/AA: labels, names, contrast, roles, ...):
   * every violation is recorded as a problem. Run through the DevTools protocol, which the page's
   * Content-Security-Policy does not govern, so the page keeps its real policy.
   */
  async checkAccessibility(step: string): Promise<void> {
    const violations = await this.page.evaluate<
      { id: string; impact: string; nodes: { target: string[] }[] }[]
    >(
      `(async () => { if (!window.axe) { ${AXE_SOURCE}\n }
        const result = await axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} } });
        return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) })); })()`,
    );
    for (const v of violations)
      this.problems.push(
        `axe ${step}: ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
      );
  }

  /** The focused element's accessible name, roughly: aria-label, else its label, else its text. */
  async focused(): Promise<string> {
    return this.page.evaluate<string>(
      `(() => { const e = document.activeElement; if (!e) return '';
        return (e.getAttribute('aria-label') || (e.labels && e.labels[0] && e.labels[0].textContent) || e.textContent || '').trim(); })()`,
    );
  }

  /** Waits (briefly) until the focused element's name is `name`. */
  async expectFocus(name: string | RegExp): Promise<void> {
    let last = '';
    for (let i = 0; i < 40; i++) {
      last = await this.focused();
      if (typeof name === 'string' ? last === name : name.test(last)) return;
      await this.page.waitForTimeout(50);
    }
    throw new Error(`focus is on "${last}", not ${String(name)}`);
  }

  /** Presses Tab until the focused element's name matches: fails when the page's tab order never gets there. */
  async tabTo(name: RegExp, max = 60): Promise<void> {
    for (let i = 0; i < max; i++) {
      await this.page.keyboard.press('Tab');
      if (name.test(await this.focused())) return;
    }
    throw new Error(`Tab never reached ${String(name)} (last: ${await this.focused()})`);
  }

  /** Draws a stroke with a real pointer of the given kind (touch and pen through the DevTools protocol). */
  async draw(
    target: { x: number; y: number; width: number; height: number },
    kind: 'mouse' | 'touch' | 'pen',
  ): Promise<void> {
    const points = Array.from({ length: 24 }, (_, i) => ({
      x: target.x + target.width * (0.1 + 0.8 * (i / 23)),
      y: target.y + target.height * (0.5 + 0.3 * Math.sin(i / 3)),
    }));
    const first = points[0] as { x: number; y: number };
    if (kind === 'mouse') {
      await this.page.mouse.move(first.x, first.y);
      await this.page.mouse.down();
      for (const p of points.slice(1)) await this.page.mouse.move(p.x, p.y);
      await this.page.mouse.up();
      return;
    }
    const cdp = await this.context.newCDPSession(this.page);
    if (kind === 'touch') {
      const touch = (type: 'touchStart' | 'touchMove' | 'touchEnd', p?: { x: number; y: number }) =>
        cdp.send('Input.dispatchTouchEvent', { type, touchPoints: p ? [{ x: p.x, y: p.y }] : [] });
      await touch('touchStart', first);
      for (const p of points.slice(1)) await touch('touchMove', p);
      await touch('touchEnd');
    } else {
      const pen = (
        type: 'mousePressed' | 'mouseMoved' | 'mouseReleased',
        p: { x: number; y: number },
        force: number,
      ) =>
        cdp.send('Input.dispatchMouseEvent', {
          type,
          x: p.x,
          y: p.y,
          button: 'left',
          buttons: type === 'mouseReleased' ? 0 : 1,
          clickCount: 1,
          pointerType: 'pen',
          force,
        });
      await pen('mousePressed', first, 0.4);
      for (const [i, p] of points.slice(1).entries()) await pen('mouseMoved', p, 0.3 + (i % 5) / 10);
      await pen('mouseReleased', points.at(-1) ?? first, 0);
    }
    await cdp.detach();
  }

  async close(): Promise<void> {
    await this.context.close();
  }
}

/**
 * One scenario in its own session (Session.open): `use` drives the page; once it is done, no page
 * error, Content-Security-Policy violation or accessibility problem may have been recorded. The
 * session is closed whatever happens.
 */
export async function inSession(
  browser: Browser,
  name: string,
  size: Size,
  use: (session: Session) => Promise<void>,
  options: { deviceScaleFactor?: number } = {},
): Promise<void> {
  const session = await Session.open(browser, name, size, options);
  try {
    await use(session);
    assert.deepEqual(session.problems, []);
  } finally {
    await session.close();
  }
}

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { useServer } from '../helpers/use-server.js';
import { ARTIFACTS, hasChromium, launchChromium, SIZES } from './browser.js';

/**
 * Issue 25: "A docs page that works on a phone." The API's docs page (/api/v1/docs, Swagger UI) in
 * Debian's chromium as a phone shows it: 390 px wide with the phone's viewport handling on, so a page
 * without a viewport of its own is laid out 980 px wide and shrunk, as a real phone would.
 */
describe(
  'issue 25: the docs page (/api/v1/docs) on a phone',
  {
    skip: hasChromium
      ? false
      : 'Debian’s chromium is not installed at /usr/bin/chromium (apt-get install chromium): browser tests skipped',
  },
  () => {
    const server = useServer();
    const shots = join(ARTIFACTS, 'docs-page');
    let browser: Browser;
    let page: Page;
    before(async () => {
      await mkdir(shots, { recursive: true });
      browser = await launchChromium();
      const context = await browser.newContext({
        viewport: SIZES.phone,
        isMobile: true,
        hasTouch: true,
        deviceScaleFactor: 1,
      });
      page = await context.newPage();
      await page.goto(`${server.url}/api/v1/docs`);
      await page.locator('.opblock').first().waitFor();
    });
    after(async () => {
      await browser?.close();
    });

    /** The page's layout width, and the elements that reach past the screen's right edge. */
    const layout = () =>
      page.evaluate<{ width: number; scrollWidth: number; beyond: string[] }>(`(() => ({
        width: document.documentElement.clientWidth,
        scrollWidth: document.documentElement.scrollWidth,
        beyond: [...document.querySelectorAll('body *')]
          .filter((e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.right > innerWidth + 1; })
          .slice(0, 5)
          .map((e) => e.tagName.toLowerCase() + '.' + [...e.classList].join('.')),
      }))()`);

    async function fitsThePhone(step: string): Promise<void> {
      await page.screenshot({ path: join(shots, `${step}.phone.png`) });
      const { width, scrollWidth, beyond } = await layout();
      assert.equal(width, SIZES.phone.width, `${step}: the page is laid out at the phone's width`);
      assert.ok(scrollWidth <= width, `${step}: nothing scrolls sideways (${scrollWidth} px wide)`);
      assert.deepEqual(beyond, [], `${step}: no element reaches past the screen`);
    }

    it('opens at the phone’s width with the API’s title, and nothing scrolls sideways', async () => {
      assert.equal(await page.title(), 'Signery API');
      await fitsThePhone('opened');
    });

    /**
     * Swagger UI draws only the entries near the screen once a description has 150 tags and operations
     * or more (a virtual list; Signery's has more): scrolls down, as a reader would, until `locator` is
     * drawn, then brings it into view.
     */
    async function scrollUntilDrawn(locator: Locator): Promise<void> {
      for (let step = 0; step < 400 && (await locator.count()) === 0; step++) {
        const atTheEnd = await page.evaluate<boolean>(
          '(() => { const before = scrollY; scrollBy(0, innerHeight / 2); return scrollY === before; })()',
        );
        if (atTheEnd) break;
        await page.waitForTimeout(20);
      }
      await locator.first().scrollIntoViewIfNeeded();
    }

    it('draws every operation of the description as the page is scrolled through', async () => {
      const described = (await (await fetch(`${server.url}/api/v1/docs/json`)).json()) as {
        paths: Record<string, Record<string, unknown>>;
        tags: unknown[];
      };
      const methods = new Set(['get', 'put', 'post', 'delete', 'patch']);
      const expected = Object.entries(described.paths)
        .flatMap(([path, item]) =>
          Object.keys(item)
            .filter((m) => methods.has(m))
            .map((m) => `${m} ${path}`),
        )
        .sort();
      assert.ok(
        expected.length + described.tags.length >= 150,
        'enough tags and operations for Swagger UI to draw them as a virtual list',
      );
      const drawn = new Set<string>();
      await page.evaluate('window.scrollTo(0, 0)');
      for (let step = 0; step < 1000; step++) {
        for (const op of await page.evaluate<string[]>(
          `[...document.querySelectorAll('.opblock')].map((o) =>
            o.querySelector('.opblock-summary-method').textContent.toLowerCase() + ' ' +
            o.querySelector('.opblock-summary-path').getAttribute('data-path'))`,
        ))
          drawn.add(op);
        const atTheEnd = await page.evaluate<boolean>(
          '(() => { const before = scrollY; scrollBy(0, innerHeight / 2); return scrollY === before; })()',
        );
        if (atTheEnd) break;
        await page.waitForTimeout(20);
      }
      assert.deepEqual([...drawn].sort(), expected);
      await page.evaluate('window.scrollTo(0, 0)');
    });

    it('an operation opened, tried out, with its long path, still fits', async () => {
      const createDocument = page.locator('.opblock-summary-path[data-path="/api/v1/documents"]');
      await scrollUntilDrawn(createDocument);
      await createDocument.first().click();
      await page.locator('.opblock.is-open .try-out__btn').first().click();
      await page.locator('.opblock.is-open .opblock-section-request-body').first().scrollIntoViewIfNeeded();
      await fitsThePhone('operation');
      const longest = page.locator(
        '.opblock-summary-path[data-path="/api/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry"]',
      );
      await scrollUntilDrawn(longest);
      await fitsThePhone('long-path');
    });

    it('Authorize offers the Bearer header beside the token parameter and the cookie', async () => {
      await page.evaluate('window.scrollTo(0, 0)');
      await page.locator('button.authorize').first().click();
      const offered = await page.locator('.auth-container h4').allTextContents();
      assert.deepEqual(
        offered.map((text) => text.replace(/\s+/g, ' ').trim()),
        ['bearer (http, Bearer)', 'token (apiKey)', 'cookie (apiKey)'],
      );
      await fitsThePhone('authorize');
    });
  },
);

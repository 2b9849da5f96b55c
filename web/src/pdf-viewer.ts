import * as pdfjs from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PDFDocumentProxy, PDFPageProxy, RenderTask } from 'pdfjs-dist/legacy/build/pdf.mjs';
import workerUrl from 'pdfjs-dist/legacy/build/pdf.worker.min.mjs?url';
import { h } from './dom.js';
import type { PlacedBox } from './fields.js';
import { t } from './i18n.js';
import { pdfWorker } from './viewer-code.js';

// The legacy build: the modern one needs the newest browsers (Map#getOrInsertComputed), and signers
// open their link on whatever phone they have.
pdfjs.GlobalWorkerOptions.workerSrc = workerUrl;
// The worker's code is the page's largest download (≈ 310 KB compressed): it was started with this
// module's own download (viewer-code.ts), not after it (issue 25, first page on a slow phone).
pdfjs.GlobalWorkerOptions.workerPort = pdfWorker();

/**
 * pdf.js asks for fonts, CMaps and decoders by file name; ours carry content hashes, so the names are
 * mapped to the built files here rather than given as one base URL.
 */
const BINARIES: Record<string, string> = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>(
      [
        '../../node_modules/pdfjs-dist/standard_fonts/*.{pfb,ttf}',
        '../../node_modules/pdfjs-dist/cmaps/*.bcmap',
        '../../node_modules/pdfjs-dist/wasm/*.wasm',
      ],
      { query: '?url', import: 'default', eager: true },
    ),
  ).map(([path, url]) => [path.slice(path.lastIndexOf('/') + 1), url]),
);

class HashedBinaryDataFactory {
  async fetch({ filename }: { kind: string; filename: string }): Promise<Uint8Array> {
    const url = BINARIES[filename];
    if (!url) throw new Error(`No such pdf.js data file: ${filename}`);
    const response = await fetch(url);
    if (!response.ok) throw new Error(`pdf.js data file ${filename}: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }
}

const ZOOM_STEPS = [0.5, 0.67, 0.8, 1, 1.25, 1.5, 2, 3];
/** The widest a page fitted to the width gets: the width of the title and notices above it. */
const MAX_FIT_WIDTH = 1120;
/** Room kept above a page scrolled to (the scroll area's padding, styles.css). */
const PAGE_MARGIN = 12;

interface PageView {
  number: number;
  element: HTMLDivElement;
  canvas: HTMLCanvasElement;
  overlay: HTMLDivElement;
  text: HTMLDivElement;
  width: number;
  height: number;
  renderedScale: number;
  /** The scale of the render in progress, if any. */
  renderingScale: number;
  /** Counts render requests, so that a request superseded while it waited for its page stops. */
  generation: number;
  task: RenderTask | undefined;
  textLoaded: boolean;
}

/**
 * The document: pages rendered by pdf.js onto canvases (only those near the screen), zoom, fit to
 * width, a page indicator, and an overlay per page where the recipient's fields are drawn. Each page
 * also carries its text, visually hidden, for screen readers.
 *
 * The pages scroll in the page's one scroll area (issue 25: not a scroll box inside a scrolling page);
 * what the page shows above the document (its title, notices) scrolls with them (`lead`), while the
 * toolbar stays above the area.
 */
export class PdfViewer {
  readonly element: HTMLElement;
  readonly toolbar: HTMLElement;
  readonly #scroller: HTMLDivElement;
  readonly #pagesBox: HTMLDivElement;
  readonly #pageStatus: HTMLSpanElement;
  readonly #zoomStatus: HTMLSpanElement;
  readonly #fitButton: HTMLButtonElement;
  #pdf: PDFDocumentProxy | undefined;
  #pages: PageView[] = [];
  #signatures: PlacedBox[] = [];
  #scale = 1;
  #fit = true;
  #current = 1;
  #observer: IntersectionObserver | undefined;
  #visible = new Set<number>();
  #resize: ResizeObserver | undefined;
  /** Renders in flight, shown as `data-pending` so tests can wait for a still picture. */
  #pending = 0;
  /** The first page as the server drew it, shown until pdf.js has drawn it. */
  #preview: HTMLElement | undefined;

  /**
   * `lead`: shown above the pages, scrolling with them. `preview`: an image of the first page, shown
   * where it will be until pdf.js has drawn it.
   */
  constructor(lead?: HTMLElement, preview?: HTMLElement) {
    const button = (label: string, text: string, onClick: () => void) =>
      h(
        'button',
        { type: 'button', class: 'tool', 'aria-label': label, title: label, onclick: onClick },
        text,
      );
    this.#pageStatus = h('span', { class: 'tool-status', 'aria-live': 'polite' });
    this.#zoomStatus = h('span', { class: 'tool-status' });
    this.#fitButton = h(
      'button',
      {
        type: 'button',
        class: 'tool tool--text',
        'aria-pressed': 'true',
        'aria-label': t('viewer.fit'),
        title: t('viewer.fit'),
        onclick: () => this.fitWidth(),
      },
      h('span', { class: 'tool-icon', 'aria-hidden': 'true' }, '↔'),
      h('span', { class: 'tool-label', 'aria-hidden': 'true' }, t('viewer.fit')),
    );
    this.toolbar = h(
      'div',
      { class: 'viewer-toolbar', role: 'toolbar', 'aria-label': t('viewer.toolbar') },
      button(t('viewer.prev'), '‹', () => this.goTo(this.#current - 1)),
      this.#pageStatus,
      button(t('viewer.next'), '›', () => this.goTo(this.#current + 1)),
      button(t('viewer.zoomOut'), '−', () => this.zoom(-1)),
      this.#zoomStatus,
      button(t('viewer.zoomIn'), '+', () => this.zoom(1)),
      this.#fitButton,
    );
    this.#pagesBox = h('div', { class: 'pages' });
    // A tab stop of its own: with nothing to fill in (a completed document), keyboard users still
    // scroll the pages with the arrow keys (WCAG 2.1.1; axe: scrollable-region-focusable).
    this.#preview = preview;
    this.#scroller = h(
      'div',
      { class: 'viewer-scroll', tabindex: '0' },
      lead ?? null,
      preview ?? null,
      this.#pagesBox,
    );
    this.element = h(
      'section',
      { class: 'viewer', 'aria-label': t('doc.document') },
      this.toolbar,
      this.#scroller,
    );
    this.element.dataset.state = 'loading';
    // The toolbar's arrow keys move between its buttons (one tab stop for the whole toolbar).
    this.toolbar.addEventListener('keydown', (event) => this.#toolbarKeys(event));
    this.#rovingTabindex();
  }

  get pageCount(): number {
    return this.#pages.length;
  }

  /** A page's width in PDF points (1-based): what sizes in points are measured against. */
  pageWidth(page: number): number | undefined {
    return this.#pages[page - 1]?.width;
  }

  async load(bytes: ArrayBuffer): Promise<void> {
    try {
      this.#pdf = await pdfjs.getDocument({
        data: new Uint8Array(bytes),
        isEvalSupported: false,
        BinaryDataFactory: HashedBinaryDataFactory,
        cMapPacked: true,
        cMapUrl: '/web/assets/',
        standardFontDataUrl: '/web/assets/',
        wasmUrl: '/web/assets/',
        useWorkerFetch: false,
        enableXfa: false,
      }).promise;
      // Every page asked of the worker at once: one after the other, a slow phone waits a round trip
      // to the worker per page before it shows the first.
      const pdf = this.#pdf;
      const pages = await Promise.all(Array.from({ length: pdf.numPages }, (_, i) => pdf.getPage(i + 1)));
      for (const page of pages) this.#pages.push(this.#pageView(page, pdf.numPages));
      await Promise.all(pages.map((page, i) => this.#markSignatures(page, this.#pages[i] as PageView)));
    } catch (error) {
      this.element.dataset.state = 'failed';
      throw error;
    }
    this.#observer = new IntersectionObserver((entries) => this.#onIntersect(entries), {
      root: this.#scroller,
      rootMargin: '200px 0px',
      threshold: [0, 0.25, 0.5, 0.75, 1],
    });
    for (const page of this.#pages) this.#observer.observe(page.element);
    this.#resize = new ResizeObserver(() => {
      if (this.#fit) this.#applyScale(this.#fitScale());
    });
    this.#resize.observe(this.#scroller);
    this.#applyScale(this.#fit ? this.#fitScale() : this.#scale);
    // The preview becomes the first page's backdrop, now at the page's size, until pdf.js draws it.
    const image = this.#preview?.querySelector('img');
    if (image && this.#pages[0]?.renderedScale === 0) this.#pages[0].element.prepend(image);
    this.#preview?.remove();
    this.element.dataset.state = 'ready';
  }

  /** Where the PDF's signatures already are (their fields' widgets), in fractions of their pages. */
  get signatures(): readonly PlacedBox[] {
    return this.#signatures;
  }

  /** Outlines the signatures already on a page, so that the signer sees where they are. */
  async #markSignatures(page: PDFPageProxy, view: PageView): Promise<void> {
    const viewport = page.getViewport({ scale: 1 });
    const annotations = (await page.getAnnotations({ intent: 'display' })) as {
      subtype?: string;
      fieldType?: string;
      rect?: number[];
    }[];
    for (const annotation of annotations) {
      if (annotation.subtype !== 'Widget' || annotation.fieldType !== 'Sig' || annotation.rect?.length !== 4)
        continue;
      const [x1, y1, x2, y2] = viewport.convertToViewportRectangle(annotation.rect) as number[];
      const position = {
        percentX: Math.min(x1!, x2!) / viewport.width,
        percentY: Math.min(y1!, y2!) / viewport.height,
        percentWidth: Math.abs(x2! - x1!) / viewport.width,
        percentHeight: Math.abs(y2! - y1!) / viewport.height,
      };
      // An invisible signature has an empty rectangle: nothing to show or avoid.
      if (position.percentWidth <= 0 || position.percentHeight <= 0) continue;
      this.#signatures.push({ page: view.number, position });
      const mark = h('div', { class: 'signed-area', title: t('viewer.signedArea'), 'aria-hidden': 'true' });
      mark.style.left = `${position.percentX * 100}%`;
      mark.style.top = `${position.percentY * 100}%`;
      mark.style.width = `${position.percentWidth * 100}%`;
      mark.style.height = `${position.percentHeight * 100}%`;
      view.overlay.append(mark);
    }
  }

  /** Shows why the document cannot be shown, in place of its pages. */
  fail(message: HTMLElement): void {
    this.element.dataset.state = 'failed';
    this.toolbar.hidden = true;
    this.#scroller.classList.add('viewer-scroll--failed');
    this.#preview?.remove();
    this.#pagesBox.replaceChildren(message);
  }

  /** The overlay of a page (1-based), where fields are positioned in fractions of the page. */
  overlay(page: number): HTMLDivElement | undefined {
    return this.#pages[page - 1]?.overlay;
  }

  goTo(page: number): void {
    const target = this.#pages[Math.min(Math.max(page, 1), this.#pages.length) - 1];
    if (!target) return;
    // The scroll area is the pages' offset parent (styles.css): a page's offsetTop is its place in it.
    this.#scroller.scrollTop = target.element.offsetTop - PAGE_MARGIN;
    this.#setCurrent(target.number);
  }

  /**
   * A page's text as lines, top to bottom, each with where it starts (a fraction of the page's height
   * from its top): the readable mode reflows them (readable-text.ts).
   */
  async textLines(number: number): Promise<{ text: string; top: number }[]> {
    const page = await this.#pdf?.getPage(number);
    if (!page) return [];
    const viewport = page.getViewport({ scale: 1 });
    const content = await page.getTextContent();
    const lines = new Map<number, { x: number; text: string }[]>();
    for (const item of content.items) {
      if (!('str' in item) || item.str.trim() === '') continue;
      const [x, y] = viewport.convertToViewportPoint(
        item.transform[4] as number,
        item.transform[5] as number,
      ) as number[];
      // Words on one baseline (within a point or two) are one line.
      const key = Math.round((y ?? 0) / 2);
      const line = lines.get(key) ?? [];
      line.push({ x: x ?? 0, text: item.str });
      lines.set(key, line);
    }
    return [...lines.entries()]
      .sort(([a], [b]) => a - b)
      .map(([key, words]) => ({
        text: words
          .sort((a, b) => a.x - b.x)
          .map((w) => w.text.trim())
          .join(' '),
        top: Math.max(0, (key * 2) / viewport.height),
      }));
  }

  /** Shows `panel` (the readable text) in place of the pages, or the pages again without one. */
  showInstead(panel: HTMLElement | undefined): void {
    this.#scroller.querySelector('.pages-instead')?.remove();
    this.#pagesBox.hidden = panel !== undefined;
    if (panel) {
      panel.classList.add('pages-instead');
      this.#pagesBox.after(panel);
    }
  }

  /** Scrolls an element inside the document into the middle of the view. */
  reveal(element: HTMLElement): void {
    element.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
  }

  zoom(direction: 1 | -1): void {
    const next =
      direction > 0
        ? (ZOOM_STEPS.find((step) => step > this.#scale + 0.001) ?? ZOOM_STEPS.at(-1))
        : ([...ZOOM_STEPS].reverse().find((step) => step < this.#scale - 0.001) ?? ZOOM_STEPS[0]);
    this.#fit = false;
    this.#applyScale(next ?? 1);
  }

  fitWidth(): void {
    this.#fit = true;
    this.#applyScale(this.#fitScale());
  }

  destroy(): void {
    this.#observer?.disconnect();
    this.#resize?.disconnect();
    void this.#pdf?.destroy();
  }

  #pageView(page: PDFPageProxy, total: number): PageView {
    const viewport = page.getViewport({ scale: 1 });
    const number = page.pageNumber;
    const canvas = h('canvas', { class: 'page-canvas', 'aria-hidden': 'true' });
    const overlay = h('div', { class: 'page-overlay' });
    // The page's words for screen readers; the page region around it says which page it is.
    const text = h('div', { class: 'visually-hidden' });
    const element = h(
      'div',
      {
        class: 'page',
        role: 'region',
        'aria-label': t('viewer.pageLabel', { n: number, total }),
        'data-page': number,
        tabindex: '-1',
      },
      canvas,
      overlay,
      text,
    );
    this.#pagesBox.append(element);
    const view: PageView = {
      number,
      element,
      canvas,
      overlay,
      text,
      width: viewport.width,
      height: viewport.height,
      renderedScale: 0,
      renderingScale: 0,
      generation: 0,
      task: undefined,
      textLoaded: false,
    };
    return view;
  }

  #fitScale(): number {
    const widest = Math.max(...this.#pages.map((p) => p.width), 1);
    // On a wide screen the page stays as wide as the text above it (styles.css `.doc-lead`).
    const available = Math.min(this.#scroller.clientWidth, MAX_FIT_WIDTH) - 24;
    return Math.max(0.25, Math.min(4, available / widest));
  }

  #applyScale(scale: number): void {
    const current = this.#current;
    this.#scale = scale;
    for (const page of this.#pages) {
      page.element.style.width = `${Math.floor(page.width * scale)}px`;
      page.element.style.height = `${Math.floor(page.height * scale)}px`;
    }
    this.#fitButton.setAttribute('aria-pressed', String(this.#fit));
    this.#zoomStatus.textContent = `${Math.round(scale * 100)}%`;
    this.#zoomStatus.setAttribute('aria-label', t('viewer.zoom', { pct: Math.round(scale * 100) }));
    for (const number of this.#visible) void this.#render(number);
    if (!this.#fit) this.goTo(current);
  }

  #onIntersect(entries: IntersectionObserverEntry[]): void {
    for (const entry of entries) {
      const number = Number((entry.target as HTMLElement).dataset.page);
      if (entry.isIntersecting) {
        this.#visible.add(number);
        void this.#render(number);
      } else this.#visible.delete(number);
    }
    // The current page is the one showing the most of itself.
    let best = this.#current;
    let bestRatio = -1;
    for (const number of this.#visible) {
      const page = this.#pages[number - 1];
      if (!page) continue;
      const box = page.element.getBoundingClientRect();
      const view = this.#scroller.getBoundingClientRect();
      const shown = Math.max(0, Math.min(box.bottom, view.bottom) - Math.max(box.top, view.top));
      if (shown > bestRatio) {
        bestRatio = shown;
        best = number;
      }
    }
    this.#setCurrent(best);
  }

  #setCurrent(page: number): void {
    this.#current = page;
    this.#pageStatus.textContent = t('viewer.page', { n: page, total: this.#pages.length });
  }

  async #render(number: number): Promise<void> {
    const view = this.#pages[number - 1];
    if (!view || !this.#pdf) return;
    const scale = this.#scale;
    if (view.renderedScale === scale || view.renderingScale === scale) return;
    const generation = ++view.generation;
    view.renderingScale = scale;
    const page = await this.#pdf.getPage(number).catch((error: unknown) => {
      if (generation === view.generation) view.renderingScale = 0;
      throw error;
    });
    // Another request for this page came while this one waited (a zoom, the page scrolling in again):
    // that one renders. pdf.js refuses two renders on one canvas, so only the newest may start, and
    // the one it replaces is cancelled right before, not before the wait.
    if (generation !== view.generation) return;
    view.task?.cancel();
    const ratio = window.devicePixelRatio || 1;
    const viewport = page.getViewport({ scale });
    const canvas = view.canvas;
    canvas.width = Math.floor(viewport.width * ratio);
    canvas.height = Math.floor(viewport.height * ratio);
    canvas.style.width = `${Math.floor(viewport.width)}px`;
    canvas.style.height = `${Math.floor(viewport.height)}px`;
    const context = canvas.getContext('2d');
    if (!context) {
      view.renderingScale = 0;
      return;
    }
    this.#setPending(1);
    view.task = page.render({
      canvas,
      canvasContext: context,
      viewport,
      transform: ratio === 1 ? undefined : [ratio, 0, 0, ratio, 0, 0],
    });
    const task = view.task;
    try {
      await task.promise;
      view.renderedScale = scale;
      view.element.dataset.rendered = 'true';
      if (number === 1) this.#dropPreview();
    } catch (error) {
      if ((error as { name?: string }).name !== 'RenderingCancelledException') throw error;
    } finally {
      if (view.task === task) {
        view.task = undefined;
        view.renderingScale = 0;
      }
      this.#setPending(-1);
    }
    if (!view.textLoaded) {
      view.textLoaded = true;
      const content = await page.getTextContent();
      view.text.textContent = content.items.map((item) => ('str' in item ? item.str : '')).join(' ');
    }
  }

  /** pdf.js has drawn the first page: its preview goes, and its image with it. */
  #dropPreview(): void {
    if (!this.#preview) return;
    const image = this.#pages[0]?.element.querySelector<HTMLImageElement>('.page-preview-image');
    image?.remove();
    if (image?.src.startsWith('blob:')) URL.revokeObjectURL(image.src);
    this.#preview.remove();
    this.#preview = undefined;
  }

  #setPending(delta: number): void {
    this.#pending += delta;
    this.element.dataset.pending = String(this.#pending);
  }

  #rovingTabindex(): void {
    const buttons = [...this.toolbar.querySelectorAll('button')];
    buttons.forEach((b, i) => b.setAttribute('tabindex', i === 0 ? '0' : '-1'));
  }

  #toolbarKeys(event: KeyboardEvent): void {
    const buttons = [...this.toolbar.querySelectorAll('button')];
    const index = buttons.indexOf(document.activeElement as HTMLButtonElement);
    if (index === -1) return;
    let next = index;
    if (event.key === 'ArrowRight') next = (index + 1) % buttons.length;
    else if (event.key === 'ArrowLeft') next = (index - 1 + buttons.length) % buttons.length;
    else if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = buttons.length - 1;
    else return;
    event.preventDefault();
    buttons[index]?.setAttribute('tabindex', '-1');
    buttons[next]?.setAttribute('tabindex', '0');
    buttons[next]?.focus();
  }
}

import { WorkerPool } from '../../base/worker-pool.js';
import type { PagePreview, PreviewRequest } from './draw-first-page.js';

export type { PagePreview } from './draw-first-page.js';

export interface PreviewLimits {
  /** Wider PDFs than this are not drawn (pdf.js holds the whole file). */
  maxPdfBytes: number;
  /** The images kept, in bytes (the least recently used go first). */
  cacheBytes: number;
  /** What drawing one page may take before its worker is ended. */
  timeLimitMs: number;
  /**
   * PDFs drawn or waiting for the worker (each held in memory meanwhile, up to `maxPdfBytes`): beyond
   * this, a page is not drawn and the caller does without.
   */
  maxWaiting: number;
  width: number;
  quality: number;
}

export const PREVIEW_LIMITS: PreviewLimits = {
  maxPdfBytes: 32 * 1024 * 1024,
  cacheBytes: 32 * 1024 * 1024,
  timeLimitMs: 10_000,
  maxWaiting: 4,
  // 640 px wide at WebP quality 10: a page full of 10-point text is ≈ 60 KB (92 KB at quality 45, 33 KB
  // at 480 px) and still reads as the page it is; a phone fits it to 366 CSS px.
  width: 640,
  quality: 10,
};

/** Why a PDF has no preview: too large, busy, or a page the engine could not draw (and why). */
export class NoPreview extends Error {}

/**
 * First-page previews of PDFs, each drawn once (in a worker thread, under a time and a memory limit)
 * and kept by the PDF's content hash, so every reader of the same bytes gets the same image and no
 * stale one: other bytes have another hash. A PDF that could not be drawn is remembered too, so a
 * hostile file costs its time limit once, not per request. Knows nothing of who may see what: the
 * caller checks that before asking.
 */
export class PagePreviews {
  readonly #limits: PreviewLimits;
  readonly #pool: WorkerPool<PreviewRequest, PagePreview>;
  /** By content hash, in order of use (a Map keeps insertion order: the first is the oldest). */
  readonly #kept = new Map<string, PagePreview | NoPreview>();
  #keptBytes = 0;
  readonly #drawing = new Map<string, Promise<PagePreview>>();

  constructor(limits: Partial<PreviewLimits> = {}) {
    this.#limits = { ...PREVIEW_LIMITS, ...limits };
    const { timeLimitMs } = this.#limits;
    this.#pool = new WorkerPool({
      besideUrl: import.meta.url,
      module: 'preview-worker',
      workers: 1,
      timeLimitMs,
      timedOut: () => new NoPreview(`drawing the first page took longer than ${timeLimitMs / 1000} s`),
      // pdf.js holds the PDF and its decoded images; the canvas (≤ 640 × 1,920 px) is outside it.
      resourceLimits: { maxOldGenerationSizeMb: 384, maxYoungGenerationSizeMb: 32 },
    });
  }

  /**
   * The first page of the PDF whose SHA-256 is `sha256` (`size` bytes, `read` when it must be drawn).
   * Throws NoPreview when there is none to give.
   */
  async firstPage(sha256: string, size: number, read: () => Promise<Uint8Array>): Promise<PagePreview> {
    const kept = this.#kept.get(sha256);
    if (kept) {
      this.#kept.delete(sha256);
      this.#kept.set(sha256, kept);
      if (kept instanceof NoPreview) throw kept;
      return kept;
    }
    if (size > this.#limits.maxPdfBytes) throw new NoPreview('the PDF is too large to draw a preview');
    const drawing = this.#drawing.get(sha256);
    if (drawing) return drawing;
    if (this.#drawing.size >= this.#limits.maxWaiting) throw new NoPreview('previews are busy');
    const started = this.#draw(sha256, read).finally(() => this.#drawing.delete(sha256));
    this.#drawing.set(sha256, started);
    return started;
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  async #draw(sha256: string, read: () => Promise<Uint8Array>): Promise<PagePreview> {
    const pdf = await read();
    const { width, quality } = this.#limits;
    let answer;
    try {
      answer = await this.#pool.run({ pdf, width, quality, maxAspect: 3 });
    } catch (error) {
      // Out of time, or the worker stopped (out of memory): this PDF is not tried again.
      throw this.#refuse(sha256, error instanceof NoPreview ? error.message : 'the page could not be drawn');
    }
    if (!answer.ok) throw this.#refuse(sha256, `the page could not be drawn: ${answer.message}`);
    this.#keep(sha256, answer.value);
    return answer.value;
  }

  #refuse(sha256: string, reason: string): NoPreview {
    const refused = new NoPreview(reason);
    this.#keep(sha256, refused);
    return refused;
  }

  #keep(sha256: string, entry: PagePreview | NoPreview): void {
    const bytes = entry instanceof NoPreview ? 64 : entry.image.byteLength;
    this.#kept.set(sha256, entry);
    this.#keptBytes += bytes;
    for (const [key, old] of this.#kept) {
      if (this.#keptBytes <= this.#limits.cacheBytes) break;
      this.#kept.delete(key);
      this.#keptBytes -= old instanceof NoPreview ? 64 : old.image.byteLength;
    }
  }
}

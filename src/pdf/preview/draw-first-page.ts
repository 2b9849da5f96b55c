import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** pdf.js's render call as made here: its types name the DOM's canvas, which a server has not. */
interface CanvasRender {
  render(parameters: { canvas: object; canvasContext: object; viewport: object; annotationMode: number }): {
    promise: Promise<void>;
  };
}

/** What a preview is drawn from, and how. */
export interface PreviewRequest {
  pdf: Uint8Array;
  /** The image's width in pixels; its height follows the page's shape, at most `maxAspect` × the width. */
  width: number;
  /** WebP quality, 0–100. */
  quality: number;
  maxAspect: number;
}

/** A page drawn as an image. */
export interface PagePreview {
  image: Uint8Array<ArrayBuffer>;
  contentType: 'image/webp';
  width: number;
  height: number;
}

/** The largest image inside the PDF pdf.js decodes (pixels); larger ones are left out of the drawing. */
const MAX_IMAGE_PIXELS = 16 * 1024 * 1024;

/** pdf.js's data files (the 14 standard fonts, CMaps), read from its package beside ours. */
const PDFJS_DIR = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));

const loadEngine = () => Promise.all([import('pdfjs-dist/legacy/build/pdf.mjs'), import('@napi-rs/canvas')]);
let engine: ReturnType<typeof loadEngine> | undefined;

/**
 * pdf.js and the canvas, loaded once per worker. The worker loads them before it says it is ready, so
 * a page's time limit counts its drawing, not the loading (over 10 s on a busy machine).
 */
export function loadDrawingEngine() {
  engine ??= loadEngine();
  return engine;
}

/**
 * The first page of a PDF drawn as a WebP image, by pdf.js on a Skia canvas (@napi-rs/canvas): what
 * the signer page shows while its own copy of pdf.js is still on its way to a slow phone. No script of
 * the PDF runs (pdf.js evaluates none here: no `eval`, no XFA, no fonts loaded into the runtime), and
 * images above 16 MP are not decoded. Runs in a worker of PagePreviews, which bounds its time and
 * memory: never call it on the server's own thread.
 */
export async function drawFirstPage(request: PreviewRequest): Promise<PagePreview> {
  const [pdfjs, { createCanvas }] = await loadDrawingEngine();
  const task = pdfjs.getDocument({
    data: request.pdf,
    isEvalSupported: false,
    enableXfa: false,
    disableFontFace: true,
    useSystemFonts: false,
    maxImageSize: MAX_IMAGE_PIXELS,
    standardFontDataUrl: `${join(PDFJS_DIR, 'standard_fonts')}/`,
    cMapUrl: `${join(PDFJS_DIR, 'cmaps')}/`,
    cMapPacked: true,
    verbosity: 0,
  });
  try {
    const pdf = await task.promise;
    const page = await pdf.getPage(1);
    const natural = page.getViewport({ scale: 1 });
    const scale = Math.min(
      request.width / natural.width,
      (request.width * request.maxAspect) / natural.height,
    );
    const viewport = page.getViewport({ scale });
    const width = Math.max(1, Math.round(viewport.width));
    const height = Math.max(1, Math.round(viewport.height));
    const canvas = createCanvas(width, height);
    const context = canvas.getContext('2d');
    // Paper is white where the PDF paints nothing (WebP would otherwise keep it transparent).
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, width, height);
    await (page as unknown as CanvasRender).render({
      canvas,
      canvasContext: context,
      viewport,
      annotationMode: pdfjs.AnnotationMode.ENABLE,
    }).promise;
    // A buffer of its own (the encoder's may not be transferable), handed to the pool without a copy.
    const image = new Uint8Array(await canvas.encode('webp', request.quality));
    return {
      image,
      contentType: 'image/webp',
      width,
      height,
    };
  } finally {
    await task.destroy();
  }
}

import { h } from './dom.js';

const INK = '#0b1f44';

/**
 * Drawing a signature with a mouse, a pen or a finger: one code path through pointer events, with
 * the pen's pressure varying the line. `touch-action: none` (CSS) keeps the finger from scrolling.
 */
export class SignaturePad {
  readonly canvas: HTMLCanvasElement;
  #context: CanvasRenderingContext2D;
  #drawing = new Map<number, { x: number; y: number }>();
  #bounds: { minX: number; minY: number; maxX: number; maxY: number } | undefined;
  #onChange: () => void;

  constructor(label: string, onChange: () => void = () => undefined) {
    this.canvas = h('canvas', { class: 'signature-pad', role: 'img', 'aria-label': label });
    const context = this.canvas.getContext('2d');
    if (!context) throw new Error('No 2D canvas');
    this.#context = context;
    this.#onChange = onChange;
    this.canvas.addEventListener('pointerdown', (e) => this.#down(e));
    this.canvas.addEventListener('pointermove', (e) => this.#move(e));
    for (const type of ['pointerup', 'pointercancel', 'lostpointercapture'] as const)
      this.canvas.addEventListener(type, (e) => this.#drawing.delete(e.pointerId));
  }

  /** Sizes the bitmap to the element's box (call once it is in the document and visible). */
  resize(): void {
    const ratio = window.devicePixelRatio || 1;
    const box = this.canvas.getBoundingClientRect();
    if (box.width === 0) return;
    this.canvas.width = Math.round(box.width * ratio);
    this.canvas.height = Math.round(box.height * ratio);
    this.#context.setTransform(ratio, 0, 0, ratio, 0, 0);
    this.clear();
  }

  get isEmpty(): boolean {
    return this.#bounds === undefined;
  }

  clear(): void {
    this.#context.clearRect(0, 0, this.canvas.width, this.canvas.height);
    this.#bounds = undefined;
    this.#onChange();
  }

  /** The ink cropped to what was drawn, with a small margin, as a PNG. */
  async toBlob(): Promise<Blob | undefined> {
    if (!this.#bounds) return undefined;
    const ratio = window.devicePixelRatio || 1;
    const pad = 6;
    const x = Math.max(0, Math.floor((this.#bounds.minX - pad) * ratio));
    const y = Math.max(0, Math.floor((this.#bounds.minY - pad) * ratio));
    const width = Math.min(
      this.canvas.width - x,
      Math.ceil((this.#bounds.maxX - this.#bounds.minX + 2 * pad) * ratio),
    );
    const height = Math.min(
      this.canvas.height - y,
      Math.ceil((this.#bounds.maxY - this.#bounds.minY + 2 * pad) * ratio),
    );
    const out = h('canvas', { width, height });
    out.getContext('2d')?.drawImage(this.canvas, x, y, width, height, 0, 0, width, height);
    return canvasBlob(out);
  }

  #point(event: PointerEvent): { x: number; y: number } {
    const box = this.canvas.getBoundingClientRect();
    return { x: event.clientX - box.left, y: event.clientY - box.top };
  }

  #down(event: PointerEvent): void {
    if (event.button !== 0 && event.pointerType === 'mouse') return;
    event.preventDefault();
    this.canvas.setPointerCapture(event.pointerId);
    const point = this.#point(event);
    this.#drawing.set(event.pointerId, point);
    this.#stroke(point, point, event);
  }

  #move(event: PointerEvent): void {
    const last = this.#drawing.get(event.pointerId);
    if (!last) return;
    event.preventDefault();
    // Coalesced events keep fast strokes smooth on devices that report more points than frames.
    const events = typeof event.getCoalescedEvents === 'function' ? event.getCoalescedEvents() : [];
    let from = last;
    for (const e of events.length > 0 ? events : [event]) {
      const point = this.#point(e);
      this.#stroke(from, point, e);
      from = point;
    }
    this.#drawing.set(event.pointerId, from);
  }

  #stroke(from: { x: number; y: number }, to: { x: number; y: number }, event: PointerEvent): void {
    const pressure = event.pointerType === 'pen' && event.pressure > 0 ? event.pressure : 0.5;
    const context = this.#context;
    context.strokeStyle = INK;
    context.lineCap = 'round';
    context.lineJoin = 'round';
    context.lineWidth = 1.2 + pressure * 2.6;
    context.beginPath();
    context.moveTo(from.x, from.y);
    context.lineTo(to.x + (from === to ? 0.01 : 0), to.y);
    context.stroke();
    const b = this.#bounds ?? { minX: to.x, minY: to.y, maxX: to.x, maxY: to.y };
    this.#bounds = {
      minX: Math.min(b.minX, from.x, to.x),
      minY: Math.min(b.minY, from.y, to.y),
      maxX: Math.max(b.maxX, from.x, to.x),
      maxY: Math.max(b.maxY, from.y, to.y),
    };
    this.#onChange();
  }
}

export function canvasBlob(canvas: HTMLCanvasElement): Promise<Blob | undefined> {
  return new Promise((resolve) => canvas.toBlob((blob) => resolve(blob ?? undefined), 'image/png'));
}

/** A typed name drawn in a handwriting-like font, cropped, as a PNG. */
export async function typedSignature(text: string): Promise<Blob | undefined> {
  const value = text.trim();
  if (!value) return undefined;
  const font = 'italic 64px "Segoe Script", "Brush Script MT", "URW Chancery L", "Z003", cursive';
  const measure = h('canvas').getContext('2d');
  if (!measure) return undefined;
  measure.font = font;
  const width = Math.ceil(measure.measureText(value).width) + 32;
  const canvas = h('canvas', { width: Math.min(width, 2400), height: 110 });
  const context = canvas.getContext('2d');
  if (!context) return undefined;
  context.font = font;
  context.fillStyle = INK;
  context.textBaseline = 'middle';
  context.fillText(value, 16, 55, 2400 - 32);
  return canvasBlob(canvas);
}

/**
 * An uploaded image redrawn onto a canvas: any format the browser reads becomes a PNG of bounded
 * size, without the file's metadata.
 */
export async function imageSignature(file: Blob): Promise<Blob | undefined> {
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch {
    return undefined;
  }
  const scale = Math.min(1, 1200 / bitmap.width, 400 / bitmap.height);
  const canvas = h('canvas', {
    width: Math.max(1, Math.round(bitmap.width * scale)),
    height: Math.max(1, Math.round(bitmap.height * scale)),
  });
  canvas.getContext('2d')?.drawImage(bitmap, 0, 0, canvas.width, canvas.height);
  bitmap.close();
  return canvasBlob(canvas);
}

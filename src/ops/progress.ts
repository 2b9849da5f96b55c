/**
 * What a long operation of the `signery` command (migrate-store, backup, restore) tells the person
 * running it (STYLE: a long operation shows progress): one line per step on standard error, so that
 * standard output keeps only the result. Counters print at most once a second, and once at the end.
 *
 * ```ts
 * const progress = new Progress();
 * const rows = progress.counter('rows documents', 10_000);
 * rows.add(500);
 * rows.done();            // "rows documents: 10,000 of 10,000 (2.1 s)"
 * ```
 */
export class Progress {
  readonly #write: (line: string) => void;
  readonly #everyMs: number;

  constructor(options: { write?: (line: string) => void; everyMs?: number } = {}) {
    this.#write = options.write ?? ((line) => process.stderr.write(`${line}\n`));
    this.#everyMs = options.everyMs ?? 1000;
  }

  line(text: string): void {
    this.#write(text);
  }

  /** Counts `label` up to `total` (when known); `detail` adds what the count alone does not say. */
  counter(label: string, total?: number, detail?: () => string): Counter {
    return new Counter(this.#write, this.#everyMs, label, total, detail);
  }
}

export class Counter {
  readonly #write: (line: string) => void;
  readonly #everyMs: number;
  readonly #label: string;
  readonly #total: number | undefined;
  readonly #detail: (() => string) | undefined;
  readonly #startedAt = performance.now();
  #lastShownAt = performance.now();
  #count = 0;

  constructor(
    write: (line: string) => void,
    everyMs: number,
    label: string,
    total: number | undefined,
    detail: (() => string) | undefined,
  ) {
    this.#write = write;
    this.#everyMs = everyMs;
    this.#label = label;
    this.#total = total;
    this.#detail = detail;
  }

  get count(): number {
    return this.#count;
  }

  add(n = 1): void {
    this.#count += n;
    const now = performance.now();
    if (now - this.#lastShownAt >= this.#everyMs) {
      this.#lastShownAt = now;
      this.#show('');
    }
  }

  /** The last line, with the time the whole count took. */
  done(): void {
    this.#show(` (${seconds(performance.now() - this.#startedAt)})`);
  }

  #show(suffix: string): void {
    const of = this.#total === undefined ? '' : ` of ${thousands(this.#total)}`;
    const detail = this.#detail ? `, ${this.#detail()}` : '';
    this.#write(`${this.#label}: ${thousands(this.#count)}${of}${detail}${suffix}`);
  }
}

/** 12345 → "12,345": counts people read at a glance. */
export function thousands(n: number): string {
  return n.toLocaleString('en-US');
}

/** Milliseconds as "0.4 s", "12.3 s" or "3 min 5 s". */
export function seconds(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** Bytes as "12.3 MB" (decimal units, as disks and buckets count them). */
export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/**
 * The answers of a pure function of bytes (a certificate's fields, its public key), remembered by the
 * array they came from and by the bytes themselves: each CMS read gives new arrays for the same
 * certificates (a document's signatures carry the same signer's and TSA's), which then share one
 * answer. At most `max` contents are kept; past that the memory starts again. A computation that
 * throws is not remembered (it throws again next time). Callers never mutate what it answers.
 *
 * ```ts
 * const fields = new BytesMemo(readFields);
 * const { commonName } = fields.get(der);
 * ```
 */
export class BytesMemo<T> {
  readonly #compute: (bytes: Uint8Array) => T;
  readonly #max: number;
  readonly #byArray = new WeakMap<Uint8Array, T>();
  readonly #byContent = new Map<string, T>();

  constructor(compute: (bytes: Uint8Array) => T, max = 1_000) {
    this.#compute = compute;
    this.#max = max;
  }

  get(bytes: Uint8Array): T {
    if (this.#byArray.has(bytes)) return this.#byArray.get(bytes)!;
    const content = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    let answer: T;
    if (this.#byContent.has(content)) answer = this.#byContent.get(content)!;
    else {
      answer = this.#compute(bytes);
      if (this.#byContent.size >= this.#max) this.#byContent.clear();
      this.#byContent.set(content, answer);
    }
    this.#byArray.set(bytes, answer);
    return answer;
  }
}

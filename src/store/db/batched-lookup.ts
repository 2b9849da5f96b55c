/** Keys per statement by default: a bound on the statement's parameter, whatever arrives in one turn. */
const MAX_KEYS = 256;

interface Waiting<K, R> {
  key: K;
  resolve: (row: R | undefined) => void;
  reject: (error: unknown) => void;
}

/**
 * Looks rows up by key with one statement for all the keys asked for during one turn of the event
 * loop. Under load a turn handles every request read from the sockets that were ready, so fifty
 * concurrent requests that each need their caller's token cost one round trip instead of fifty
 * (bench/README.md: API throughput). A lone request waits for nothing: the statement goes at the end
 * of the turn it was asked in (`setImmediate`).
 *
 * Each caller gets the row of its own key, read by a statement that started after it asked, so
 * nothing is served from a cache. When the statement fails, every caller of the batch gets its error.
 *
 * ```ts
 * const users = new BatchedLookup(async (ids: string[]) => {
 *   const rows = await db.selectFrom('users').selectAll().where('id', 'in', ids).execute();
 *   return new Map(rows.map((row) => [row.id, row]));
 * });
 * const user = await users.get(id); // undefined when no row has that key
 * ```
 */
export class BatchedLookup<K, R> {
  readonly #load: (keys: K[]) => Promise<ReadonlyMap<K, R>>;
  readonly #maxKeys: number;
  #waiting: Waiting<K, R>[] = [];

  /**
   * `load` answers distinct keys (at most `maxKeys` per call) with a map from key to row; a key
   * without a row is left out.
   */
  constructor(load: (keys: K[]) => Promise<ReadonlyMap<K, R>>, options: { maxKeys?: number } = {}) {
    this.#load = load;
    this.#maxKeys = options.maxKeys ?? MAX_KEYS;
  }

  get(key: K): Promise<R | undefined> {
    return new Promise((resolve, reject) => {
      if (this.#waiting.length === 0) setImmediate(() => this.#flush());
      this.#waiting.push({ key, resolve, reject });
    });
  }

  #flush(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    let batch = new Map<K, Waiting<K, R>[]>();
    for (const one of waiting) {
      if (batch.size === this.#maxKeys && !batch.has(one.key)) {
        void this.#answer(batch);
        batch = new Map();
      }
      const same = batch.get(one.key);
      if (same) same.push(one);
      else batch.set(one.key, [one]);
    }
    void this.#answer(batch);
  }

  /** One statement for the keys of `batch`, and each of their callers answered from it. */
  async #answer(batch: Map<K, Waiting<K, R>[]>): Promise<void> {
    let rows: ReadonlyMap<K, R>;
    try {
      rows = await this.#load([...batch.keys()]);
    } catch (error) {
      for (const callers of batch.values()) for (const one of callers) one.reject(error);
      return;
    }
    for (const [key, callers] of batch) for (const one of callers) one.resolve(rows.get(key));
  }
}

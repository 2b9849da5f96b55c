/**
 * Runs `work` on every item of `items`, at most `limit` at a time (blob copies and hashes, which
 * wait on the network or the disk more than on the CPU). The first failure stops the taking of new
 * items and is thrown once the items under way have settled.
 *
 * ```ts
 * await forEachConcurrently(keys(), 8, (key) => copy(key));
 * ```
 */
export async function forEachConcurrently<T>(
  items: AsyncIterable<T> | Iterable<T>,
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  const iterator = Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : items[Symbol.iterator]();
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!failure) {
      // An async generator queues concurrent calls of next(), so each item goes to one worker.
      const next = await iterator.next();
      if (next.done) return;
      try {
        await work(next.value);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, worker));
  if (failure) throw failure.error;
}

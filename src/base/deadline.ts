/**
 * `work`, or a rejection once `ms` have passed without its answer: for probes (readiness, the job
 * queue's metrics, the rate limits' store) that must answer during a partition, when the database's connections forward
 * nothing and a query would wait for TCP to give up. The work itself is not stopped.
 *
 * ```ts
 * await withDeadline(database.ping(), 1_000);
 * ```
 */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

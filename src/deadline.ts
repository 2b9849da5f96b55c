/**
 * `work`, or a rejection once `ms` have passed without its answer (the work itself goes on: this only
 * stops waiting for it). Readiness probes and the rate limits' store use it so that a store that
 * hangs is seen as down rather than holding its callers.
 */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

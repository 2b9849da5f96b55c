/**
 * Wakes this process's workers when a job is enqueued here, so an event is delivered at once rather
 * than at the next poll. It is process-wide on purpose, the one module-level set in Signery: the
 * enqueuing code holds only a transaction, not the app, and a ring carries no state — it only makes
 * each listening worker look for due jobs now. Workers of other processes find the job by polling.
 */
const listeners = new Set<() => void>();

/** Called by `enqueue`; the job may not be committed yet, so a woken worker also looks again shortly. */
export function ringDoorbell(): void {
  for (const listener of listeners) listener();
}

/** Returns the function that stops listening. */
export function listenToDoorbell(listener: () => void): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

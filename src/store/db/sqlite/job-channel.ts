import type { JobChannel } from '../dialect.js';

/**
 * SQLite: one host writes the database, and its workers are woken in the process (jobs/doorbell.ts);
 * its other processes (the CLI) find jobs by polling. There is no other node to notify.
 */
export const sqliteJobChannel: JobChannel = Object.freeze({
  notifyWith: async () => undefined,
  notifyCommitted: () => undefined,
});

import type { JobSettlement } from '../job-rows.js';

/**
 * SQLite: a statement costs no round trip, and one write transaction (one commit, one fsync) already
 * holds a whole batch, so settlements are written one after the other in it (jobs/queue.ts
 * settleInTransaction); there is no one-statement form.
 */
export const sqliteSettlement: JobSettlement = Object.freeze({ settleInOneStatement: undefined });

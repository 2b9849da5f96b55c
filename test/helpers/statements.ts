import type { Kysely, KyselyPlugin } from 'kysely';
import type { Database } from '../../src/store/db/schema.js';

/** The server's database seen through a plugin that counts the statements run through it. */
export interface CountedDatabase {
  /** The same database (the real one underneath), every statement through it counted. */
  db: Kysely<Database>;
  /** Statements answered since the last `reset`. */
  readonly statements: number;
  reset(): void;
}

/**
 * Counts the statements a use case runs: give it `counted.db` in place of the server's.
 *
 * ```ts
 * const counted = countingStatements(server.app.deps.db);
 * await getDocument({ ...server.app.deps, db: counted.db }, actor, id);
 * assert.equal(counted.statements, 1);
 * ```
 */
export function countingStatements(db: Kysely<Database>): CountedDatabase {
  let statements = 0;
  const counting: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      statements++;
      return args.result;
    },
  };
  return {
    db: db.withPlugin(counting),
    get statements() {
      return statements;
    },
    reset() {
      statements = 0;
    },
  };
}

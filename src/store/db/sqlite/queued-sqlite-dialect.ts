import {
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  type SqliteDialectConfig,
  type TransactionSettings,
} from 'kysely';

/**
 * Kysely's SQLite dialect, with the one connection handed to its waiters in turn. Kysely's own lock
 * wakes every waiter at each release, and all but one go back to waiting: under load, with
 * statements of fifty requests waiting, each statement costs fifty wake-ups. Profiled at 50
 * connections (bench/README.md: document reads), its lock and unlock took 9 % of the server's CPU on
 * GET /documents/:id and 31 % on POST /search, more than SQLite itself. Here a release wakes the
 * next waiter alone, first come first served.
 *
 * ```ts
 * const db = new Kysely<Database>({ dialect: new QueuedSqliteDialect({ database }) });
 * ```
 */
export class QueuedSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = Object.freeze({ ...config });
  }

  override createDriver(): Driver {
    return new QueuedDriver(new SqliteDriver(this.#config));
  }
}

/** A driver whose connection is acquired in turn; the wrapped driver does the rest. */
class QueuedDriver implements Driver {
  readonly #driver: Driver;
  readonly #waiting: (() => void)[] = [];
  #held = false;

  constructor(driver: Driver) {
    this.#driver = driver;
  }

  init(): Promise<void> {
    return this.#driver.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    // A release hands the connection on with `#held` still set, so nobody overtakes the queue.
    if (this.#held) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    this.#held = true;
    return this.#driver.acquireConnection();
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.#driver.releaseConnection(connection);
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#driver.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#driver.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#driver.rollbackTransaction(connection);
  }

  async savepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.#driver.savepoint?.(connection, name, compileQuery);
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.#driver.rollbackToSavepoint?.(connection, name, compileQuery);
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    await this.#driver.releaseSavepoint?.(connection, name, compileQuery);
  }

  destroy(): Promise<void> {
    return this.#driver.destroy();
  }
}

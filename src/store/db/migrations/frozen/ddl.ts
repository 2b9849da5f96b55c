import type { ColumnDataType, ColumnDefinitionBuilder, CreateTableBuilder, Kysely } from 'kysely';
import type { SqlDialect } from '../../dialect.js';

/*
 * The statements the migrations make, their columns declared in SQL's words. Frozen with the
 * migrations that use it: they are history (an installed database has run them), so what this module
 * writes for a declaration must never change; test/store/migrations-frozen.test.ts pins the schema
 * they create. A later need is a new word here, never a changed one. It imports no live code: only
 * the dialect's column types, which the migrations always took from it.
 */

/**
 * A column in SQL's words, in this order, each part but the type optional:
 * `<type> primary key not null unique default <integer> references <table>.<column> on delete cascade`.
 * The type is text, integer or bigint, or one the dialects name differently (SqlDialect): json,
 * timestamp, and serial (a counted primary key: bigserial on PostgreSQL, autoincrement on SQLite).
 */
export type ColumnDeclaration = string;

const DECLARATION =
  /^(text|integer|bigint|json|timestamp|serial)( primary key)?( not null)?( unique)?(?: default (\d+))?(?: references (\w+\.\w+)( on delete cascade)?)?$/;

/**
 * `CREATE TABLE` with its columns in declaration order; table constraints and `execute()` follow.
 *
 * ```ts
 * await createTable(db, d, 'recovery_codes', {
 *   id: 'text primary key',
 *   user_id: 'text not null references users.id on delete cascade',
 *   used_at: 'timestamp',
 * }).execute();
 * ```
 */
export function createTable(
  db: Kysely<unknown>,
  d: SqlDialect,
  table: string,
  columns: Record<string, ColumnDeclaration>,
): CreateTableBuilder<string, string> {
  let builder: CreateTableBuilder<string, string> = db.schema.createTable(table);
  for (const [name, declaration] of Object.entries(columns)) {
    builder = builder.addColumn(name, ...column(d, declaration));
  }
  return builder;
}

/** Indexes of a table by name, made in this order: plain ones first, then unique ones. */
interface Indexes {
  indexes?: Record<string, string[]>;
  uniqueIndexes?: Record<string, string[]>;
}

/**
 * A new table as the migrations declare it: its columns in declaration order, its composite primary
 * key (the constraint `<table>_pk`) or named unique constraints, and the indexes made right after it.
 */
export interface TableDeclaration extends Indexes {
  columns: Record<string, ColumnDeclaration>;
  primaryKey?: string[];
  unique?: Record<string, string[]>;
}

/** Declarations by table name, carried out in declaration order. */
type Tables<T> = Record<string, T>;

/** What a migration adds to an existing table: columns (in declaration order), then indexes. */
export interface TableAdditions extends Indexes {
  columns?: Record<string, ColumnDeclaration>;
}

/**
 * Creates tables in declaration order, each followed by its indexes.
 *
 * ```ts
 * await createTables(db, d, {
 *   recovery_codes: {
 *     columns: { id: 'text primary key', user_id: 'text not null', used_at: 'timestamp' },
 *     indexes: { recovery_codes_user: ['user_id'] },
 *   },
 * });
 * ```
 */
export async function createTables(db: Kysely<unknown>, d: SqlDialect, tables: Tables<TableDeclaration>) {
  for (const [table, declaration] of Object.entries(tables)) {
    let builder = createTable(db, d, table, declaration.columns);
    if (declaration.primaryKey)
      builder = builder.addPrimaryKeyConstraint(`${table}_pk`, declaration.primaryKey);
    for (const [name, columns] of Object.entries(declaration.unique ?? {})) {
      builder = builder.addUniqueConstraint(name, columns);
    }
    await builder.execute();
    await createIndexes(db, table, declaration);
  }
}

/**
 * Adds columns and indexes to existing tables, in declaration order.
 *
 * ```ts
 * await alterTables(db, d, {
 *   files: { columns: { share_id: 'text' }, indexes: { files_share: ['share_id'] } },
 * });
 * ```
 */
export async function alterTables(db: Kysely<unknown>, d: SqlDialect, tables: Tables<TableAdditions>) {
  for (const [table, additions] of Object.entries(tables)) {
    await addColumns(db, d, table, additions.columns ?? {});
    await createIndexes(db, table, additions);
  }
}

async function createIndexes(db: Kysely<unknown>, table: string, indexes: Indexes): Promise<void> {
  for (const [name, columns] of Object.entries(indexes.indexes ?? {})) {
    await createIndex(db, name, table, columns);
  }
  for (const [name, columns] of Object.entries(indexes.uniqueIndexes ?? {})) {
    await createIndex(db, name, table, columns, { unique: true });
  }
}

/** How a table of rows that change ends: when a row was created, and when it last changed. */
export const TIMESTAMPS = { created_at: 'timestamp not null', updated_at: 'timestamp not null' };

/**
 * A sign-in at an identity provider between its start and its callback (oidc_login_states for users,
 * share_oidc_states for recipients): what the callback checks, and where it goes on to.
 */
export const SIGN_IN_FLOW = {
  provider: 'text not null',
  code_verifier: 'text not null',
  nonce: 'text not null',
  binding_hash: 'text not null',
  redirect: 'text',
  created_at: 'timestamp not null',
  expires_at: 'timestamp not null',
};

/**
 * `CREATE [UNIQUE] INDEX <name> ON <table> (<columns>)`.
 *
 * ```ts
 * await createIndex(db, 'jobs_lane', 'jobs', ['ordering_key', 'ordering_seq'], { unique: true });
 * ```
 */
export async function createIndex(
  db: Kysely<unknown>,
  name: string,
  table: string,
  columns: string[],
  options: { unique?: boolean } = {},
): Promise<void> {
  const index = db.schema.createIndex(name).on(table).columns(columns);
  await (options.unique ? index.unique() : index).execute();
}

/** Adds columns to a table, one `ALTER TABLE … ADD COLUMN` each (all SQLite takes), in declaration order. */
export async function addColumns(
  db: Kysely<unknown>,
  d: SqlDialect,
  table: string,
  columns: Record<string, ColumnDeclaration>,
): Promise<void> {
  for (const [name, declaration] of Object.entries(columns)) {
    await db.schema
      .alterTable(table)
      .addColumn(name, ...column(d, declaration))
      .execute();
  }
}

function column(
  d: SqlDialect,
  declaration: ColumnDeclaration,
): [ColumnDataType, (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder] {
  const parts = DECLARATION.exec(declaration);
  if (!parts) throw new Error(`Not a column declaration of the migrations: ${declaration}`);
  const [, type, primaryKey, notNull, unique, defaultTo, references, cascade] = parts;
  const dataType =
    type === 'json'
      ? d.jsonType
      : type === 'timestamp'
        ? d.timestampType
        : type === 'serial'
          ? d.serialType
          : (type as ColumnDataType);
  return [
    dataType,
    (c) => {
      if (primaryKey) c = c.primaryKey();
      if (type === 'serial' && d.name === 'sqlite') c = c.autoIncrement();
      if (notNull) c = c.notNull();
      if (unique) c = c.unique();
      if (defaultTo !== undefined) c = c.defaultTo(Number(defaultTo));
      if (references) c = c.references(references);
      if (cascade) c = c.onDelete('cascade');
      return c;
    },
  ];
}

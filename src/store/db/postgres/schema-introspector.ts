import {
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  PostgresDialect,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  type PostgresDialectConfig,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

interface ColumnRow {
  table_name: string;
  table_type: string;
  column_name: string;
  data_type: string;
  is_nullable: string;
  column_default: string | null;
}

/**
 * Kysely's own PostgreSQL introspector reads the catalog of every schema in the database and calls
 * `pg_get_serial_sequence` on each column it finds. When another process drops or alters a table
 * in another schema between those two catalog reads (test runs and tools sharing one server), the
 * query fails with "column … does not exist" or "relation … does not exist", and with it the
 * migrator's check for its own tables. This one reads only the schema the instance lives in, from
 * `information_schema`, so what other instances do cannot reach it.
 */
export class SchemaIntrospector implements DatabaseIntrospector {
  constructor(
    private readonly db: Kysely<unknown>,
    private readonly schema: string,
  ) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<SchemaMetadata>`
      select nspname as name from pg_catalog.pg_namespace where nspname = ${this.schema}`.execute(this.db);
    return rows;
  }

  async getTables(
    options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
  ): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select t.table_name, t.table_type, c.column_name, c.data_type, c.is_nullable, c.column_default
      from information_schema.tables t
      left join information_schema.columns c
        on c.table_schema = t.table_schema and c.table_name = t.table_name
      where t.table_schema = ${this.schema}
      order by t.table_name, c.ordinal_position`.execute(this.db);
    const internal = new Set([DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE]);
    const tables = new Map<string, TableMetadata & { columns: TableMetadata['columns'][number][] }>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && internal.has(row.table_name)) continue;
      let table = tables.get(row.table_name);
      if (!table) {
        table = { name: row.table_name, schema: this.schema, isView: row.table_type === 'VIEW', columns: [] };
        tables.set(row.table_name, table);
      }
      // A table without columns still comes back once, with a null column from the outer join.
      if (row.column_name === null) continue;
      table.columns.push({
        name: row.column_name,
        dataType: row.data_type,
        isNullable: row.is_nullable === 'YES',
        hasDefaultValue: row.column_default !== null,
        isAutoIncrementing: row.column_default?.startsWith('nextval(') ?? false,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

/** Kysely's PostgreSQL dialect with the introspector confined to one schema. */
export class SchemaScopedPostgresDialect extends PostgresDialect {
  constructor(
    config: PostgresDialectConfig,
    private readonly schema: string,
  ) {
    super(config);
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SchemaIntrospector(db, this.schema);
  }
}

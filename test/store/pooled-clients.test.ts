import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { CompiledQuery, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import {
  beforeCommit,
  COMMIT_FLIGHT,
  postgresDialect,
  writeTransaction,
} from '../../src/store/db/dialect.js';
import { pooledClients } from '../../src/store/db/postgres/pooled-clients.js';
import { TEST_DATABASE_URL } from '../helpers/server.js';

// PostgreSQL only: the round trips saved are PostgreSQL's. The SQLite run reports this as skipped.
const skip = TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (runs in the PostgreSQL pass of CI)';

interface Tables {
  items: { id: number; name: string };
}

describe('PostgreSQL transactions in as few round trips as they can (pooled-clients.ts)', { skip }, () => {
  const url = TEST_DATABASE_URL ?? '';
  const schema = `t_flights_${randomBytes(5).toString('hex')}`;
  let pool: pg.Pool;
  let db: Kysely<Tables>;
  let other: pg.Client;
  // Round trips: each ends with one ReadyForQuery from the server.
  let roundTrips = 0;

  const insert = (trx: Kysely<Tables>, id: number, name = `item ${id}`) =>
    trx.insertInto('items').values({ id, name }).execute();
  const insertQuery = (trx: Kysely<Tables>, id: number) =>
    trx
      .insertInto('items')
      .values({ id, name: `item ${id}` })
      .returning('id')
      .compile();
  /** The ids committed, as another connection sees them. */
  const committed = async () =>
    (await other.query<{ id: number }>(`select id from "${schema}".items order by id`)).rows.map((r) => r.id);
  const counted = async <T>(work: () => Promise<T>): Promise<{ result: T; roundTrips: number }> => {
    const before = roundTrips;
    const result = await work();
    return { result, roundTrips: roundTrips - before };
  };

  before(async () => {
    other = new pg.Client({ connectionString: url });
    await other.connect();
    await other.query(`create schema "${schema}"`);
    await other.query(`create table "${schema}".items (id int primary key, name text not null)`);
    // One connection: every transaction runs on it, so what it has prepared is known.
    pool = new pg.Pool({ connectionString: url, max: 1, options: `-c search_path="${schema}"` });
    pool.on('connect', (client) => {
      (client as unknown as { connection: pg.Connection }).connection.on('readyForQuery', () => {
        roundTrips += 1;
      });
    });
    db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: pooledClients(pool) }) });
    // Prepares the statements used below on the connection.
    await writeTransaction(db, postgresDialect, async (trx) => {
      await insert(trx, 0);
      await beforeCommit(trx, insertQuery(trx, -1), () => undefined);
    });
  });

  beforeEach(async () => {
    await other.query(`delete from "${schema}".items`);
  });

  after(async () => {
    await db?.destroy();
    await other?.query(`drop schema if exists "${schema}" cascade`);
    await other?.end();
  });

  it('BEGIN goes with the first statement: a transaction of one insert costs two round trips, not three', async () => {
    const { roundTrips: trips } = await counted(() =>
      writeTransaction(db, postgresDialect, (trx) => insert(trx, 1)),
    );
    assert.equal(trips, 2);
    assert.deepEqual(await committed(), [1]);
  });

  it('a statement kept for the commit goes with BEGIN and COMMIT: one round trip, its rows handed over', async () => {
    const seen: unknown[][] = [];
    const { roundTrips: trips } = await counted(() =>
      writeTransaction(db, postgresDialect, (trx) =>
        beforeCommit(trx, insertQuery(trx, 2), (rows) => {
          seen.push(rows);
        }),
      ),
    );
    assert.equal(trips, 1);
    assert.deepEqual(seen, [[{ id: 2 }]]);
    assert.deepEqual(await committed(), [2]);
  });

  it('a transaction that sends nothing costs nothing', async () => {
    const { roundTrips: trips } = await counted(() =>
      writeTransaction(db, postgresDialect, async () => 'idle'),
    );
    assert.equal(trips, 0);
  });

  it('a kept statement that fails fails the transaction: nothing of it commits, and the connection goes on', async () => {
    let handed = false;
    await assert.rejects(
      writeTransaction(db, postgresDialect, async (trx) => {
        await insert(trx, 3);
        await beforeCommit(trx, insertQuery(trx, 4), () => {
          handed = true;
        });
        // The same id again: a unique violation, raised by the flight before its COMMIT.
        await beforeCommit(trx, insertQuery(trx, 4), () => undefined);
      }),
      (error: { code?: string }) => error.code === '23505',
    );
    assert.equal(handed, false);
    assert.deepEqual(await committed(), []);
    await writeTransaction(db, postgresDialect, (trx) => insert(trx, 5));
    assert.deepEqual(await committed(), [5]);
  });

  it('a first statement that fails is reported as itself, and the transaction rolls back', async () => {
    await assert.rejects(
      writeTransaction(db, postgresDialect, async (trx) => {
        await sql`select no_such_column from items`.execute(trx);
      }),
      (error: { code?: string }) => error.code === '42703',
    );
    await assert.rejects(
      writeTransaction(db, postgresDialect, async (trx) => {
        await insert(trx, 6);
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    assert.deepEqual(await committed(), []);
  });

  it('a first statement of several commands without parameters (a migration) still runs, inside the transaction', async () => {
    await writeTransaction(db, postgresDialect, async (trx) => {
      await sql`create table scratch (id int); insert into scratch values (1)`.execute(trx);
      await sql`drop table scratch`.execute(trx);
      await insert(trx, 9);
    });
    assert.deepEqual(await committed(), [9]);
    await assert.rejects(
      writeTransaction(db, postgresDialect, async (trx) => {
        await sql`create table scratch (id int); insert into scratch values (1)`.execute(trx);
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    const { rows } = await other.query(`select to_regclass('"${schema}".scratch') as t`);
    assert.deepEqual(rows, [{ t: null }]);
  });

  it('statements sent together at the start of a transaction all run inside it, in order', async () => {
    const [first, second] = await writeTransaction(db, postgresDialect, (trx) =>
      Promise.all([
        sql<{ at: string; xid: string }>`select now() as at, txid_current() as xid`.execute(trx),
        sql<{ at: string; xid: string }>`select now() as at, txid_current() as xid`.execute(trx),
      ]),
    );
    assert.equal(first.rows[0]?.xid, second.rows[0]?.xid);
    assert.deepEqual(first.rows[0]?.at, second.rows[0]?.at);
  });

  it("rows that come with BEGIN keep the pool's type parsers (int8 and timestamps as set on the pool)", async () => {
    const typed = new pg.Pool({
      connectionString: url,
      max: 1,
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
          oid === 20
            ? (value: string) => `int8:${value}`
            : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
      },
    });
    const typedDb = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: pooledClients(typed) }) });
    try {
      const { rows } = await writeTransaction(typedDb, postgresDialect, (trx) =>
        sql<{ n: unknown }>`select 7::int8 as n`.execute(trx),
      );
      assert.deepEqual(rows, [{ n: 'int8:7' }]);
    } finally {
      await typedDb.destroy();
    }
  });

  it('a query object (a cursor, say) as first statement runs inside the transaction too', async () => {
    const client = await pooledClients(pool).connect();
    try {
      await client.query('begin');
      const viaObject = await new Promise<string>((resolve, reject) => {
        client.query(
          new pg.Query('select txid_current() as xid', [], (error, result) =>
            error ? reject(error) : resolve(String(result.rows[0]?.xid)),
          ),
        );
      });
      const viaText = await client.query<{ xid: string }>('select txid_current() as xid');
      assert.equal(viaObject, String(viaText.rows[0]?.xid));
      await client.query('rollback');
    } finally {
      client.release();
    }
  });

  it('nothing may follow the COMMIT a flight sent in its transaction', async () => {
    await assert.rejects(
      db.transaction().execute(async (trx) => {
        await trx.executeQuery(
          CompiledQuery.raw(COMMIT_FLIGHT, [
            { sql: 'insert into items (id, name) values ($1, $2)', parameters: [7, 'x'] },
          ]),
        );
        await insert(trx, 8);
      }),
      /the transaction has committed/,
    );
    // What the flight committed stays; the statement after it never ran.
    assert.deepEqual(await committed(), [7]);
  });
});

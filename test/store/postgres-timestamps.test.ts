import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { isoTimestamp } from '../../src/store/db/postgres/postgres-database.js';
import { TEST_DATABASE_URL } from '../helpers/server.js';

/**
 * Timestamps read from PostgreSQL are ISO strings with milliseconds, as SQLite stores them
 * (`Date.toISOString`). The usual UTC text is rewritten without Date's parser (issue 26: it was
 * several percent of a page of search results); the answers must be Date's, whatever the text.
 */
describe('timestamps read from PostgreSQL (isoTimestamp)', () => {
  const viaDate = (text: string) => new Date(text).toISOString();

  it('gives what Date gives, for UTC text with 0 to 6 fractional digits and for other zones', () => {
    for (const text of [
      '2026-11-24 21:44:10+00',
      '2026-11-24 21:44:10.2+00',
      '2026-11-24 21:44:10.26+00',
      '2026-11-24 21:44:10.267+00',
      '2026-11-24 21:44:10.2675+00',
      '2026-11-24 21:44:10.26759+00',
      '2026-11-24 21:44:10.999999+00',
      '1999-12-31 23:59:59.5+00',
      // Not UTC: Date's parser, as before.
      '2026-11-24 21:44:10.267+05:30',
      '2026-11-24 21:44:10-08',
    ]) {
      assert.equal(isoTimestamp(text), viaDate(text), text);
    }
    assert.throws(() => isoTimestamp('infinity'), RangeError, 'as Date: no ISO form');
  });

  it(
    'reads what the server writes for timestamptz values, in UTC and in another zone',
    { skip: TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (runs in the PostgreSQL pass of CI)' },
    async () => {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      try {
        for (const zone of ['UTC', 'Asia/Kolkata']) {
          await client.query(`set time zone '${zone}'`);
          const { rows } = await client.query<{ text: string; epoch: string }>(
            `select t::text as text, floor(extract(epoch from t) * 1000)::bigint::text as epoch
               from (values (timestamptz '2026-11-24 21:44:10.267891+00'), (timestamptz '2026-01-01 00:00:00+00'),
                            (now()), (timestamptz '2000-02-29 12:00:00.5+00')) as v(t)`,
          );
          for (const row of rows) {
            assert.equal(
              isoTimestamp(row.text),
              new Date(Math.floor(Number(row.epoch))).toISOString(),
              `${zone}: ${row.text}`,
            );
          }
        }
      } finally {
        await client.end();
      }
    },
  );
});

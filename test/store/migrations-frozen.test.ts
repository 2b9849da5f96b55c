import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { DatabaseHandle } from '../../src/store/db/dialect.js';
import { migrateToLatest, migrations } from '../../src/store/db/migrate.js';
import { openPostgres } from '../../src/store/db/postgres/postgres-database.js';
import type { Database } from '../../src/store/db/schema.js';
import { openSqlite } from '../../src/store/db/sqlite/sqlite-database.js';
import { TEST_DATABASE_URL } from '../helpers/server.js';

/**
 * The schema a fresh database has after each released migration (and every one before it, in name
 * order, as Kysely applies them): the SHA-256 of `schemaOf` below. An installed database ran these
 * migrations when they were released, so a fresh one must still end up with exactly its schema.
 * Append the line of a new migration when it is released (the failure names it); never change a line.
 */
const PINNED: Record<'sqlite' | 'postgres', Record<string, string>> = {
  sqlite: {
    '0001-foundation': '07dbc363f79bf02eb11c903c5b5aa6c1a9e5e63bb628e0319364012adca0eef0',
    '0002-files': '8ef3b334310f69da861cce969703ee307194844e5d1e28a46311047f61eceaee',
    '0003-documents': 'bfd0db8ecedb7a5032e4c36621f201ecee47e65e257038f2288c214f7234f033',
    '0004-jobs-webhooks': '2c443f4a3a1dafdc5ec3707ad82ca369ce3ddd364c6bb1a7dbe8719c117ce81b',
    '0005-sharing': '86d84a62d6ad42d65056dc6995faab7a7c1cf626790b742e67a914357447dbc3',
    '0006-stamps': '97cf000f33f475561534ea6f84b77aabea6ba9fb31a574acd291c9e074a9b57a',
    '0007-two-step': '71bb3f5fbadd9e174669f436cc287468753b8aa22a400345b787cfe62e67ded1',
    '0008-search-audit': '2b02a13bff7351153c84472c030879ce55d7e240a2ec947c9afb2b6112d2edee',
    '0009-contacts-enums': '63fe917e61b783103998445f3a5034c1313e371c0d3ba82177fd5f452a987840',
    '0010-oidc': 'd4e06bc4a964afc62cc9f674d6f72c71a9426b5243b09934cbf4df4b0208b7ab',
    '0011-sharing-quorum': '4b2e3a1631196038906dd627a4416897356ea6d0f6b076789eeff0e88af303ef',
    '0012-recipient-sessions': '84c8e7c654cb799b382aa081726f940afa9926cde85fff65116b145a8038a977',
    '0013-dev-pki': '37d60e893e31e1dde1349f1d77ee623fd68f347c830e3704a152b7a59666f538',
    '0014-rate-limits': '579b8cb6ffc246f8190b2000a867e165fa8f39dfd0516499705bd60c5852b175',
    '0018-file-repairs': '42a55a5d5b25bb2115389baa3694512bd5d5fdc0126e3e6ec397e8c5409b1860',
    '0021-webhook-rotation': '7ddbfa8733845c2638d0a8ec3d76ae5d71f9c19ca966f3070302149ba204acf1',
    '0022-archive-renewal': '38cdadcd55435b8e8e1038ac7327e4c2586660062fa6b316f550066a815aa06e',
    '0023-event-feed': 'd5f9a22d6fb2c211e76bb74795b9b64242f5dc06299b556b9e6ea464d473c14f',
    '0024-file-reference-indexes': 'f615bc732e00bc0c2ff557c56800deafd771a02b0351348260fd496ce59ce3f0',
    '0025-share-links-per-share': 'b20fa75f6990f04047407873cf7c496a7c3ee197030655077dc8ab5c215e3486',
    '0026-totp-step-memory': '080c93fb7eabc73b5af394261a77d9a4414cda149cc6bc064db300930b421fa7',
    '0027-webhook-holders': '7b7ede86a4168c6dc0144c10e16a1a3571bf50e0accc2cc7a323c6ebccca61a0',
    '0028-scroll-timeout-ms': '3e6046ee4323bad04920cfcd3ed10aa3c36251e985b5d9c6bbfaf1a3873f2f45',
    '0029-share-groups': '59ce1d6477ad88427a57aa15c0dcc482a7047e98a395c729bd81dfcc6ad2dd1c',
    '0030-agent-actions': 'f42c979bc8d8f637d2749509db98fd6aa02a0a1c1b8e335a7e726bbf3c7c845c',
  },
  postgres: {
    '0001-foundation': '2f3f81fc005f95dd924383e76d6e1e282f9e0b2e60604ad4acb98564fa8e0f79',
    '0002-files': 'ff69bdb6ef1818cbe92793bfe989014abf033918d93b9490c5a66755eb5ed8d6',
    '0003-documents': '72be05768ce3058bf28a4aabbf19080888edba32772bb221cdd722fefb03c8a5',
    '0004-jobs-webhooks': '5755c7f34dc260731eb5f65958aa713d60039c10f5958fd0ac3d985aff63a7a0',
    '0005-sharing': 'a1944e49e9be90b550233839fbd744b67831996ea4f498996647afd1cd21daa9',
    '0006-stamps': 'eaa4ba07a5ceb9ff9b56a986e3d57090a01fbcb1e84cdc1c7e6e19c060fffa03',
    '0007-two-step': '25d3b289e4ba91b35901706c6b5baf4349906ba7cb82266a3e730005fc2335e8',
    '0008-search-audit': '43d7e9da7ae3a30ea90ae1bff326acba9cb4b197412a79efa13eb980d2da8d85',
    '0009-contacts-enums': '1fe7c522eaaa2c50df11566323aa13cde80e011fc53fe373f1c31ec1cd301d49',
    '0010-oidc': 'da33a8178951aeb5d8c395655577ee861b079ffe6a0bf3d845285edcaa81de44',
    '0011-sharing-quorum': '1d346ca76c5deb3e468d0159a27658824025b5abe289068ed8e00c0532bad852',
    '0012-recipient-sessions': 'f2ad7a6e0186ddeb34989b7760c0a893461d92e482d24a9b13c91e8b628f9743',
    '0013-dev-pki': '0f06536a202aa22e7d0cd13a608fb0cf1ec804e680d3c2563034a485b091a2a2',
    '0014-rate-limits': '803979e45051c6d0ea42148225dc5adb9c0941d7ca17a2513ea6e7a4c6356906',
    '0018-file-repairs': '0d2c0d6a4a13aa1aad2e01a821b4fef8415a0fac07e0e0557eeb5c29281d7882',
    '0021-webhook-rotation': 'b1059a2adb00dee337f1384fd3213c6ccb45fad944d4c3ee32540f72cd39d01a',
    '0022-archive-renewal': '11829a1ceef35d3dce7418b3337e98032a5807a22e3963d69fa6ad880772dc63',
    '0023-event-feed': '5d35d2c56e71d5e75ba654664b196390f10437bb544d5d5a92e76fc0ea89de6d',
    '0024-file-reference-indexes': '7bff459a94c91eb4409c1ffd906af79119fadaae62dffff96f68b4cbbdfbb5d9',
    '0025-share-links-per-share': 'd621e8daf78494e3bb5b4ed60a231a775213b30c24e04c3648bef80c24aa6f83',
    '0026-totp-step-memory': '373018f5f5ba972f88b97dc1e8ec49444b432450ed506d118ffe665720e93f3b',
    '0027-webhook-holders': '2d8c29dc5833e463e7d8858e2238953f3fb40ae42c22b20a5ce8a00950c53fe5',
    '0028-scroll-timeout-ms': '38d05d52c472c7f47b8af789d06e0cf0c19ce72e06077e7b26d25ccfc89d5968',
    '0029-share-groups': 'ea7824ee4b2ad4f258a57c3d45f1e686202609e4a3190aaa657744e1e0402d9e',
    '0030-agent-actions': '4c70272e259b9b00c182531881e47722a67f78d6e07bdc74b8e7d6cdf55d531f',
  },
};

describe('migrations are history: what a released migration creates never changes', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('SQLite: a fresh file has the pinned schema after each migration', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'signery-migrations-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    await assertPinnedSchemas('sqlite', () =>
      openSqlite({ file: join(dir, `${randomBytes(4).toString('hex')}.db`) }),
    );
  });

  it(
    'PostgreSQL: a fresh schema has the pinned schema after each migration',
    { skip: TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (runs in the PostgreSQL pass of CI)' },
    async () => {
      const url = TEST_DATABASE_URL!;
      const openFresh = async (): Promise<DatabaseHandle<Database>> => {
        const schema = `t_frozen_${randomBytes(5).toString('hex')}`;
        cleanups.push(async () => {
          const admin = new pg.Client({ connectionString: url });
          await admin.connect();
          await admin.query(`drop schema if exists "${schema}" cascade`);
          await admin.end();
        });
        return openPostgres({ url, schema });
      };
      await assertPinnedSchemas('postgres', openFresh);
    },
  );
});

/**
 * Applies the migrations one by one to a fresh database and compares its schema after each with the
 * pinned one; then checks that `migrateToLatest` on another fresh database ends at the same schema.
 */
async function assertPinnedSchemas(
  dialect: 'sqlite' | 'postgres',
  openFresh: () => DatabaseHandle<Database> | Promise<DatabaseHandle<Database>>,
): Promise<void> {
  const pinned = PINNED[dialect];
  const unpinned: string[] = [];
  const stepwise = await openFresh();
  let last = '';
  try {
    const all = migrations(stepwise.dialect);
    for (const name of Object.keys(all).sort()) {
      await all[name]!.up(stepwise.db as Kysely<unknown>);
      last = await schemaOf(stepwise);
      const hash = sha256(last);
      if (pinned[name] === undefined) {
        unpinned.push(`'${name}': '${hash}',`);
        continue;
      }
      assert.equal(
        hash,
        pinned[name],
        `${dialect}: the schema after ${name} is not the one it created when released; a released migration must not change. The schema after it now:\n${last}`,
      );
    }
  } finally {
    await stepwise.close();
  }
  assert.deepEqual(unpinned, [], `pin the migrations once they are released: add to PINNED.${dialect}`);
  const latest = await openFresh();
  try {
    await migrateToLatest(latest);
    assert.equal(await schemaOf(latest), last, 'migrateToLatest ends at the schema of the last migration');
  } finally {
    await latest.close();
  }
}

/**
 * The schema as text, one line per object, in a stable order; Kysely's own tables left out. SQLite
 * keeps each table's and index's CREATE statement as written (columns added later appended to it);
 * PostgreSQL's catalog gives columns with their types, defaults and place, constraints, indexes and
 * sequences (the instance's schema name replaced by SCHEMA), as the PostgreSQL of .ci/run words them.
 */
async function schemaOf(handle: DatabaseHandle<Database>): Promise<string> {
  const db = handle.db as Kysely<unknown>;
  if (handle.dialect.name === 'sqlite') {
    const { rows } = await sql<{ line: string }>`
      select type || ' ' || name || ' ' || tbl_name || ': ' || coalesce(sql, '') as line
      from sqlite_master where tbl_name not like 'kysely%' order by name`.execute(db);
    return rows.map((r) => r.line).join('\n');
  }
  const schema = handle.schema!;
  const { rows } = await sql<{ line: string }>`
    select 'column ' || c.relname || '.' || a.attname || ' #' || a.attnum || ' '
        || format_type(a.atttypid, a.atttypmod) || case when a.attnotnull then ' not null' else '' end
        || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '') as line
      from pg_attribute a
      join pg_class c on c.oid = a.attrelid
      join pg_namespace n on n.oid = c.relnamespace
      left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where n.nspname = ${schema} and c.relkind = 'r' and c.relname not like 'kysely%'
        and a.attnum > 0 and not a.attisdropped
    union all
    select 'constraint ' || c.relname || '.' || con.conname || ': ' || pg_get_constraintdef(con.oid)
      from pg_constraint con
      join pg_class c on c.oid = con.conrelid
      join pg_namespace n on n.oid = con.connamespace
      where n.nspname = ${schema} and c.relname not like 'kysely%'
    union all
    select 'index ' || tablename || '.' || indexname || ': ' || indexdef
      from pg_indexes where schemaname = ${schema} and tablename not like 'kysely%'
    union all
    select 'sequence ' || sequencename || ': ' || data_type::text || ' start ' || start_value
        || ' by ' || increment_by
      from pg_sequences where schemaname = ${schema} and sequencename not like 'kysely%'
    order by line`.execute(db);
  return rows.map((r) => r.line.replaceAll(schema, 'SCHEMA')).join('\n');
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

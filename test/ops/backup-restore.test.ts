import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import pg from 'pg';
import { verifyAuditChain } from '../../src/audit/verify-chain.js';
import { openPostgres } from '../../src/store/db/postgres/postgres-database.js';
import { workspace, type Workspace } from '../pdf/oracles.js';
import { makePdf } from '../helpers/pdf.js';
import { startS3rver, type RunningS3 } from '../helpers/s3rver.js';
import { startServer, TEST_DATABASE_URL, upload } from '../helpers/server.js';
import { anInstallation, assertSameInstallation, runSignery, type Installation } from './installation.js';

/** The environment naming an installation: its data directory and, on PostgreSQL, its schema. */
function installationEnv(dataDir: string, schema: string | undefined): Record<string, string> {
  return {
    DATA_DIR: dataDir,
    ...(TEST_DATABASE_URL ? { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema! } : {}),
  };
}

async function dropSchemas(...schemas: (string | undefined)[]): Promise<void> {
  if (!TEST_DATABASE_URL) return;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  for (const schema of schemas) if (schema) await client.query(`drop schema if exists "${schema}" cascade`);
  await client.end();
}

/** The tables of `schema` (PostgreSQL), or whether DATA_DIR holds a database (SQLite). */
async function holdsADatabase(dataDir: string, schema: string | undefined): Promise<boolean> {
  if (!TEST_DATABASE_URL) return existsSync(join(dataDir, 'signery.db'));
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rowCount } = await client.query(
      'select 1 from information_schema.tables where table_schema = $1',
      [schema],
    );
    return (rowCount ?? 0) > 0;
  } finally {
    await client.end();
  }
}

const newSchema = () => (TEST_DATABASE_URL ? `t_br_${randomBytes(4).toString('hex')}` : undefined);

describe('signery backup and restore: backups that restore (Operations)', () => {
  let space: Workspace;
  let backup: string;
  let installation: Installation;
  const leftovers: { dirs: string[]; schemas: (string | undefined)[] } = { dirs: [], schemas: [] };

  before(async () => {
    space = await workspace();
    backup = join(space.dir, 'backup');
  });
  after(async () => {
    for (const dir of leftovers.dirs) await rm(dir, { recursive: true, force: true });
    await dropSchemas(...leftovers.schemas);
    await space?.remove();
  });

  it('a backup made while the server runs, restored once the installation was wiped, is the same installation: files, signatures, audit chain; restoring over it again is refused', async () => {
    const server = await startServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    const env = installationEnv(server.dataDir, server.schema);
    leftovers.dirs.push(server.dataDir);
    leftovers.schemas.push(server.schema);
    try {
      installation = await anInstallation(server);
      const backedUp = await runSignery(['backup', backup], env);
      assert.equal(backedUp.status, 0, backedUp.stderr);
      assert.match(
        backedUp.stdout,
        /^BACKED UP: [\d,]+ rows, [1-9]\d* blobs \(.*\) copied; manifest written/,
      );
    } finally {
      // The wipe: the server stops, its data directory is deleted and its schema dropped.
      await server.close();
    }
    assert.equal(await holdsADatabase(server.dataDir, server.schema), false, 'wiped');

    const restored = await runSignery(['restore', backup], env);
    assert.equal(restored.status, 0, restored.stderr);
    assert.match(
      restored.stdout,
      /^RESTORED and verified: [\d,]+ rows, [1-9]\d* blobs, [1-9]\d* audit records chained/,
    );
    assert.match(restored.stderr, /audit chain of [\d,]+ records in 1 tenant chain\(s\) intact/);

    const node = await startServer({ env: { ...env, WEBHOOK_ALLOW_PRIVATE: 'true' } });
    try {
      await assertSameInstallation(node, installation, space);
    } finally {
      await node.close();
    }

    const again = await runSignery(['restore', backup], env);
    assert.equal(again.status, 1, again.stderr);
    assert.match(again.stderr, /The target already holds an installation \(.*\): nothing was restored/);
    // The backup's schema name is free again for the next tests.
    await dropSchemas(server.schema);
  });

  it('a backup with one changed blob is refused before anything is restored', async () => {
    const damaged = join(space.dir, 'damaged');
    await cp(backup, damaged, { recursive: true });
    const manifest = JSON.parse(await readFile(join(damaged, 'manifest.json'), 'utf8'));
    const { sha256 } = manifest.blobs.list[0];
    const path = join(damaged, 'blobs', sha256.slice(0, 2), sha256.slice(2, 4), sha256);
    const bytes = await readFile(path);
    const middle = bytes.length >> 1;
    bytes.writeUInt8(bytes.readUInt8(middle) ^ 0xff, middle);
    await writeFile(path, bytes);

    const dataDir = join(space.dir, 'target-of-damaged');
    const schema = newSchema();
    leftovers.schemas.push(schema);
    const refused = await runSignery(['restore', damaged], installationEnv(dataDir, schema));
    assert.equal(refused.status, 1, refused.stderr);
    assert.match(
      refused.stderr,
      new RegExp(`is damaged, nothing was restored: blob ${sha256} does not match its SHA-256`),
    );
    assert.equal(await holdsADatabase(dataDir, schema), false, 'nothing was restored');
    assert.equal(existsSync(join(dataDir, 'blobs')), false);
  });

  it(
    'a PostgreSQL backup restores under another schema name',
    { skip: TEST_DATABASE_URL ? false : 'schemas are PostgreSQL’s' },
    async () => {
      const dataDir = join(space.dir, 'renamed');
      const schema = newSchema();
      leftovers.schemas.push(schema);
      const restored = await runSignery(['restore', backup], installationEnv(dataDir, schema));
      assert.equal(restored.status, 0, restored.stderr);
      const db = await openPostgres({ url: TEST_DATABASE_URL!, schema });
      try {
        const documents = await db.db
          .selectFrom('documents')
          .select('id')
          .where('kind', '=', 'document')
          .execute();
        assert.equal(documents.length, installation.documents.length);
        assert.deepEqual((await verifyAuditChain(db.db)).broken, []);
      } finally {
        await db.close();
      }
    },
  );

  describe('with the blobs in a bucket', () => {
    let s3: RunningS3;
    before(async () => {
      s3 = await startS3rver();
    });
    after(async () => {
      await s3?.close();
    });

    it('the backup lists them with their hashes and leaves them there; a restore finds them, and refuses a changed one', async () => {
      const server = await startServer({ env: s3.env });
      const env = { ...installationEnv(server.dataDir, server.schema), ...s3.env };
      leftovers.dirs.push(server.dataDir);
      leftovers.schemas.push(server.schema);
      const dir = join(space.dir, 'bucket-backup');
      let id: string;
      try {
        const token = await server.adminToken();
        const content = await upload(server, token, makePdf({ lines: ['In the bucket'] }));
        const created = await server.api('POST', '/documents', {
          token,
          body: { body: { documentTitle: 'In the bucket', pdfFile: { content } } },
        });
        id = created.body.results[0].documentId;
        assert.equal(
          (await server.api('PUT', '/documents/seal/1', { token, body: { id, certificate: true } })).status,
          200,
        );
        const backedUp = await runSignery(['backup', dir], env);
        assert.equal(backedUp.status, 0, backedUp.stderr);
        assert.match(backedUp.stdout, /blobs \(.*\) hashed in s3:\/\/test-bucket;/);
      } finally {
        await server.close();
      }
      assert.equal(existsSync(join(dir, 'blobs')), false, 'the bytes stayed in the bucket');

      const restored = await runSignery(['restore', dir], env);
      assert.equal(restored.status, 0, restored.stderr);
      const node = await startServer({ env });
      try {
        const token = await node.adminToken();
        const report = await node.api('GET', `/documents/${id}/verify`, { token });
        assert.equal(report.body.signatures[0].indication, 'TOTAL_PASSED');
      } finally {
        await node.close();
      }

      // An object of the bucket replaced by other bytes: the backup no longer restores.
      const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
      const { sha256 } = manifest.blobs.list[0];
      const client = new S3Client({
        endpoint: s3.endpoint,
        region: s3.region,
        forcePathStyle: true,
        credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
      });
      await client.send(
        new PutObjectCommand({ Bucket: s3.bucket, Key: `blobs/${sha256}`, Body: 'other bytes' }),
      );
      client.destroy();
      const refused = await runSignery(['restore', '--force', dir], env);
      assert.equal(refused.status, 1, refused.stderr);
      assert.match(
        refused.stderr,
        new RegExp(`is damaged, nothing was restored: blob ${sha256} does not match`),
      );
      assert.equal(await holdsADatabase(server.dataDir, server.schema), true, '--force removed nothing');
    });
  });
});

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { useServer } from '../helpers/use-server.js';

const MB = 1024 * 1024;
const FILE = 100_000;

describe('spec Limits, Storage: the organization’s quota holds under concurrent uploads', () => {
  const server = useServer();
  let token: string;
  before(async () => {
    token = await server.adminToken();
    const set = await server.api('PUT', '/settings/properties', { token, body: { storageLimitMb: 2 } });
    assert.equal(set.status, 200, set.text);
  });

  it('40 uploads of 100 kB at once over a 2 MB quota: those that fit are stored, the rest are 413, and the use never passes the quota', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        server.api('POST', '/files/saveFile', {
          token,
          form: {
            file: { name: `f${String(i)}.bin`, type: 'application/octet-stream', bytes: randomBytes(FILE) },
          },
        }),
      ),
    );
    const stored = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    for (const answer of refused) {
      assert.equal(answer.status, 413, answer.text);
      assert.equal(answer.body.code, 'LIMIT_EXCEEDED');
    }
    const rows = await server.app.database.db
      .selectFrom('files')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('used'))
      .executeTakeFirstOrThrow();
    const used = Number(rows.used);
    assert.ok(used <= 2 * MB, `${String(used)} bytes stored over a ${String(2 * MB)}-byte quota`);
    assert.equal(used, stored.length * FILE, 'every stored upload is counted, nothing else');
    assert.equal(stored.length, Math.floor((2 * MB) / FILE), 'as many as fit');
    // Each answer's storage use counts that file and never passes the limit.
    for (const answer of stored) assert.ok(answer.body.storage.used <= answer.body.storage.limit);
    // Every stored file has its audit entry (written in the same transaction as its row).
    const audited = await server.app.database.db
      .selectFrom('audit_log')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('activity_type', '=', 'fileUploaded')
      .executeTakeFirstOrThrow();
    assert.equal(Number(audited.n), stored.length);
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ManualClock } from '../../src/base/clock.js';
import { makePdf } from '../helpers/pdf.js';
import { createUser, TEST_DATABASE_URL, upload } from '../helpers/server.js';
import { aUser } from '../helpers/people.js';
import { shareDocument } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';
import { hasTool, pdfsig, tool, useWorkspace } from '../pdf/oracles.js';

describe('spec Reports and audit logs: POST /logs/search, its continuation rules and DELETE /logs/scroll', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({ clock });
  let auditor: string;
  const logins = 30;

  before(async () => {
    await createUser(server, { name: 'auditor', rights: ['view_logs'] });
    await createUser(server, { name: 'ann' });
    auditor = await server.login('auditor', 'user-password-1');
    for (let i = 0; i < logins; i++) {
      clock.advance(1000);
      await server.login('ann', 'user-password-1');
    }
  });

  const search = (body: Record<string, unknown>, token = auditor) =>
    server.api('POST', '/logs/search', { token, body });
  const annLogins = {
    query: {
      filter: [
        { type: 'term', field: 'actorId', value: 'ann' },
        { type: 'term', field: 'activityType', value: 'logged' },
      ],
    },
  };

  it('needs the right view_logs', async () => {
    const ann = await server.login('ann', 'user-password-1');
    const refused = await search({ logsQuery: {} }, ann);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'FORBIDDEN');
  });

  it('term filters on activityType and actorId; {total, results}; newest first; each record with its chain hash', async () => {
    const response = await search({ logsQuery: { ...annLogins, size: 5 } });
    assert.equal(response.status, 200, response.text);
    assert.ok(response.body.total >= logins);
    assert.equal(response.body.results.length, 5);
    assert.equal(response.body.scrollId, undefined);
    for (const r of response.body.results) {
      assert.equal(r.activityType, 'logged');
      assert.equal(r.actorId, 'ann');
      assert.match(r.hash, /^[0-9a-f]{64}$/);
    }
    const times = response.body.results.map((r: { time: string }) => r.time);
    assert.deepEqual(times, [...times].sort().reverse());
    const adminOnly = await search({
      logsQuery: { query: { filter: [{ type: 'term', field: 'actorId', value: 'auditor' }] } },
    });
    assert.ok(adminOnly.body.results.every((r: { actorId: string }) => r.actorId === 'auditor'));
    const offset = await search({ logsQuery: { ...annLogins, size: 2, from: 3 } });
    assert.deepEqual(
      offset.body.results.map((r: { id: string }) => r.id),
      response.body.results.slice(3, 5).map((r: { id: string }) => r.id),
    );
  });

  it('range and terms filters; unknown fields are 400', async () => {
    const all = await search({ logsQuery: { ...annLogins, size: 1000 } });
    const times = all.body.results.map((r: { time: string }) => r.time).sort();
    const window = await search({
      logsQuery: {
        query: {
          filter: [
            { type: 'terms', field: 'activityType', values: ['logged', 'nothing'] },
            { type: 'term', field: 'actorId', value: 'ann' },
            { type: 'range', field: 'time', gte: times[10], lt: times[20] },
          ],
        },
        size: 100,
      },
    });
    assert.equal(window.status, 200, window.text);
    assert.equal(window.body.total, 10);
    const unknown = await search({
      logsQuery: { query: { filter: [{ type: 'term', field: 'data', value: 'x' }] } },
    });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.message, /"logsQuery\.query\.filter\[0\]\.field" must be one of/);
  });

  it('scrolls: from only in the first request, the same query, the latest scrollId, size may change, each record once', async () => {
    const first = await search({ logsQuery: { ...annLogins, size: 7, from: 0 }, scroll: { timeout: 60 } });
    assert.equal(first.status, 200, first.text);
    assert.ok(first.body.scrollId);
    const ids = first.body.results.map((r: { id: string }) => r.id);

    const withFrom = await search({
      logsQuery: { ...annLogins, size: 7, from: 7 },
      scroll: { id: first.body.scrollId },
    });
    assert.equal(withFrom.status, 400);
    assert.equal(withFrom.body.code, 'VALIDATION_ERROR');
    assert.match(withFrom.body.message, /"logsQuery\.from" is not allowed in a continuation/);

    const otherQuery = await search({ logsQuery: { size: 7 }, scroll: { id: first.body.scrollId } });
    assert.equal(otherQuery.status, 400);
    assert.match(otherQuery.body.message, /must repeat the query/);

    // New records written during the scroll do not shift its pages.
    await server.login('ann', 'user-password-1');
    let scrollId = first.body.scrollId as string;
    let size = 3;
    const previous = scrollId;
    for (;;) {
      const next = await search({ logsQuery: { ...annLogins, size }, scroll: { id: scrollId } });
      assert.equal(next.status, 200, next.text);
      if (next.body.results.length === 0) break;
      ids.push(...next.body.results.map((r: { id: string }) => r.id));
      scrollId = next.body.scrollId;
      size = size === 3 ? 11 : 3;
    }
    assert.equal(new Set(ids).size, ids.length, 'no record twice');
    assert.equal(ids.length, first.body.total);

    const stale = await search({ logsQuery: { ...annLogins, size: 3 }, scroll: { id: previous } });
    assert.equal(stale.status, 400);
    assert.match(stale.body.message, /"scroll\.id" is not the latest scrollId/);

    const closed = await server.api('DELETE', '/logs/scroll', { token: auditor, body: { scrollId } });
    assert.equal(closed.status, 200, closed.text);
    assert.deepEqual(closed.body, { status: 'SUCCESS' });
    const gone = await search({ logsQuery: { ...annLogins, size: 3 }, scroll: { id: scrollId } });
    assert.equal(gone.status, 404);
    assert.equal(
      (await server.api('DELETE', '/logs/scroll', { token: auditor, body: { scrollId } })).status,
      404,
    );
  });

  it('a scroll context expires after its timeout unless a request refreshes it', async () => {
    const first = await search({ logsQuery: { ...annLogins, size: 2 }, scroll: { timeout: 10 } });
    clock.advance(9_000);
    const second = await search({
      logsQuery: { ...annLogins, size: 2 },
      scroll: { id: first.body.scrollId },
    });
    assert.equal(second.status, 200);
    clock.advance(9_000);
    const third = await search({
      logsQuery: { ...annLogins, size: 2 },
      scroll: { id: second.body.scrollId },
    });
    assert.equal(third.status, 200);
    clock.advance(10_001);
    const expired = await search({
      logsQuery: { ...annLogins, size: 2 },
      scroll: { id: third.body.scrollId },
    });
    assert.equal(expired.status, 404);
  });

  it('spec Reports: "scroll.timeout | number | seconds the scroll context stays open": 1.5 is one and a half seconds, at each refresh too; outside 1..3600 is 400', async () => {
    const first = await search({ logsQuery: { ...annLogins, size: 2 }, scroll: { timeout: 1.5 } });
    assert.equal(first.status, 200, first.text);
    clock.advance(1_400);
    const second = await search({
      logsQuery: { ...annLogins, size: 2 },
      scroll: { id: first.body.scrollId },
    });
    assert.equal(second.status, 200, second.text);
    // Refreshed with the same 1.5 s, not rounded to 2 s.
    clock.advance(1_501);
    const expired = await search({
      logsQuery: { ...annLogins, size: 2 },
      scroll: { id: second.body.scrollId },
    });
    assert.equal(expired.status, 404, expired.text);
    for (const [timeout, problem] of [
      [0.5, 'must be greater than or equal to 1'],
      [3600.5, 'must be less than or equal to 3600'],
    ] as const) {
      const refused = await search({ logsQuery: { ...annLogins, size: 2 }, scroll: { timeout } });
      assert.equal(refused.status, 400, refused.text);
      assert.match(refused.body.message, new RegExp(`"scroll.timeout" ${problem}`));
    }
  });

  it('another user cannot continue or close someone else’s scroll', async () => {
    const other = (await aUser(server, { name: 'auditor2', rights: ['view_logs'] })).token;
    const first = await search({ logsQuery: { ...annLogins, size: 2 }, scroll: { timeout: 60 } });
    assert.equal(
      (await search({ logsQuery: { ...annLogins, size: 2 }, scroll: { id: first.body.scrollId } }, other))
        .status,
      404,
    );
    assert.equal(
      (await server.api('DELETE', '/logs/scroll', { token: other, body: { scrollId: first.body.scrollId } }))
        .status,
      404,
    );
  });
});

describe('tamper evidence: the audit hash chain and signery audit verify', () => {
  const server = useServer();
  const verify = () =>
    spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'audit', 'verify'], {
      env: {
        ...(process.env as Record<string, string>),
        DATA_DIR: server.dataDir,
        ADMIN_EMAIL: '',
        ADMIN_PASSWORD: '',
        ...(TEST_DATABASE_URL ? { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: server.schema! } : {}),
      },
      encoding: 'utf8',
    });

  before(async () => {
    await createUser(server, { name: 'ann' });
    for (let i = 0; i < 5; i++) await server.login('ann', 'user-password-1');
  });

  const records = () =>
    server.app.deps.db
      .selectFrom('audit_log')
      .select(['id', 'seq', 'prev_hash', 'hash', 'actor_id'])
      .orderBy('seq')
      .execute();
  let changed: { id: string; actor_id: string | null } | undefined;

  it('each record links to the previous one of its tenant; verify passes on an untouched log', async () => {
    const rows = await records();
    assert.ok(rows.length >= 7);
    assert.equal(rows[0]!.prev_hash, '0'.repeat(64));
    for (let i = 1; i < rows.length; i++) assert.equal(rows[i]!.prev_hash, rows[i - 1]!.hash);
    const result = verify();
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(
      result.stdout,
      new RegExp(`OK: ${rows.length} audit records in 1 tenant chains checked, 0 broken`),
    );
  });

  it('a record changed directly in the database is found and named', async () => {
    const rows = await records();
    const victim = rows[3]!;
    changed = victim;
    await server.app.deps.db
      .updateTable('audit_log')
      .set({ actor_id: 'mallory' })
      .where('id', '=', victim.id)
      .execute();
    const result = verify();
    assert.equal(result.status, 1, result.stdout + result.stderr);
    assert.match(
      result.stdout,
      new RegExp(`first broken record ${victim.id} \\(seq ${victim.seq}\\): content changed`),
    );
    assert.match(result.stdout, /FAILED: .* 1 broken/);
  });

  it('a record deleted from the middle is found: the next one no longer links', async () => {
    const rows = await records();
    // Repair the earlier change first, so this break is the first one.
    await sql`update audit_log set actor_id = ${changed!.actor_id} where id = ${changed!.id}`.execute(
      server.app.deps.db,
    );
    assert.equal(verify().status, 0);
    await server.app.deps.db.deleteFrom('audit_log').where('id', '=', rows[4]!.id).execute();
    const result = verify();
    assert.equal(result.status, 1);
    assert.match(
      result.stdout,
      new RegExp(`first broken record ${rows[5]!.id} .*previous record missing or changed`),
    );
  });
});

describe('GET /documents/:id/audit: the audit-trail PDF of one document', () => {
  const server = useServer();
  let owner: string;
  let viewer: string;
  let stranger: string;
  const space = useWorkspace();

  before(async () => {
    owner = (await aUser(server, { name: 'olga' })).token;
    viewer = (await aUser(server, { name: 'vic' })).token;
    stranger = (await aUser(server, { name: 'sam' })).token;
  });

  it('lists the events, actors and file hashes, is sealed (pdfsig: valid) and only for the owner or administrators', async () => {
    const pdf = await upload(server, owner, makePdf());
    const created = await server.api('POST', '/documents', {
      token: owner,
      body: { body: { documentTitle: 'Audited agreement', pdfFile: { content: pdf } } },
    });
    const id = created.body.results[0].documentId as string;
    await shareDocument(server, owner, id, { to: [{ sharePurpose: 'view', shareTo: 'vic' }] });

    const response = await fetch(`${server.url}/api/v1/documents/${id}/audit?token=${owner}`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/pdf');
    const bytes = Buffer.from(await response.arrayBuffer());
    const path = await space.write('audit.pdf', bytes);
    if (hasTool('pdfsig')) {
      const [verdict] = await pdfsig(path);
      assert.equal(verdict!.validation, 'Signature is Valid.');
    }
    if (hasTool('mutool')) {
      const text = await tool('mutool', ['draw', '-F', 'txt', path]);
      assert.match(text, /Audit trail/);
      assert.match(text, /Audited agreement/);
      assert.match(text, new RegExp(id));
      assert.match(text, /documentCreated {2}by olga/);
      const file = await server.app.deps.db
        .selectFrom('files')
        .select(['sha256'])
        .where('id', '=', pdf)
        .executeTakeFirstOrThrow();
      assert.match(text, new RegExp(`SHA-256 ${file.sha256}`));
      const events = await server.app.deps.db
        .selectFrom('audit_log')
        .select(['hash'])
        .where('object_id', '=', id)
        .execute();
      for (const e of events) assert.match(text, new RegExp(`hash ${e.hash}`));
    }
    const forViewer = await server.api('GET', `/documents/${id}/audit`, { token: viewer });
    assert.equal(forViewer.status, 403);
    const forStranger = await server.api('GET', `/documents/${id}/audit`, { token: stranger });
    assert.equal(forStranger.status, 404);
  });
});

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { emitEvent } from '../../src/core/events/emit-event.js';
import { writeTransaction } from '../../src/store/db/dialect.js';
import { assertError } from '../helpers/api-errors.js';
import { ADMIN, createUser, startServer, type TestServer } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { scopeOf } from './helpers.js';

type Scope = { tenantId: string; organizationId: string };

describe('GET /events: the events feed for integrators who poll', () => {
  const server = useServer();
  /** The administrator's token, their tenant, and the Legal organization's scope. */
  const the = {} as { admin: string; tenant: Scope; legal: Scope };
  before(async () => {
    await createUser(server, { name: 'legal-admin', role: 'organizationAdmin', organization: 'Legal' });
    await createUser(server, { name: 'legal-rep', organization: 'Legal' });
    Object.assign(the, {
      admin: await server.adminToken(),
      tenant: await scopeOf(server, ADMIN.name),
      legal: await scopeOf(server, 'legal-admin'),
    });
  });

  /** Every event the feed gives `token` from `after` on, page by page; the ids and the last cursor. */
  async function readAll(node: TestServer, token: string, after: string | null, limit = 1000) {
    const ids: string[] = [];
    let cursor = after;
    for (;;) {
      const page = await node.api('GET', '/events', {
        token,
        query: { limit: String(limit), ...(cursor ? { after: cursor } : {}) },
      });
      assert.equal(page.status, 200, page.text);
      ids.push(...page.body.events.map((e: { id: string }) => e.id));
      cursor = page.body.cursor;
      if (!page.body.more) return { ids, cursor };
    }
  }

  /**
   * `readAll` again until it holds every one of `ids`. On PostgreSQL the feed withholds an event while
   * any transaction on the server older than it is still open (pg_snapshot_xmin), and other test
   * files share the server: the wait is the feed's documented delay, not a lost event.
   */
  async function readUntil(node: TestServer, token: string, after: string | null, ids: string[]) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const read = await readAll(node, token, after);
      if (ids.every((id) => read.ids.includes(id)) || Date.now() > deadline) return read;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  const emitMany = async (scope: Scope, count: number, prefix: string) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push(...(await emitIds(scope, `${prefix}-${i}`)));
    return ids;
  };
  const emitIds = async (scope: Scope, documentId: string) => {
    const { eventId } = await writeTransaction(server.app.deps.db, server.app.deps.dialect, (trx) =>
      emitEvent(trx, {
        ...scope,
        documentId,
        event: 'documentEdited',
        actor: 'poller-test',
        at: server.app.deps.clock.now(),
      }),
    );
    return [eventId];
  };

  it('pages through every event in order with the cursor, exactly once; nothing new keeps the cursor; another node continues it', async () => {
    const start = await readAll(server, the.admin, null);
    const emitted = await emitMany(the.tenant, 25, 'paged');
    await readUntil(server, the.admin, start.cursor, emitted);
    const pages: { events: { id: string; event: string; documentId: string }[]; more: boolean }[] = [];
    let cursor = start.cursor;
    for (let i = 0; i < 3; i++) {
      const page = await server.api('GET', '/events', {
        token: the.admin,
        query: { limit: '10', ...(cursor ? { after: cursor } : {}) },
      });
      assert.equal(page.status, 200, page.text);
      pages.push(page.body);
      cursor = page.body.cursor;
    }
    assert.deepEqual(
      pages.map((p) => [p.events.length, p.more]),
      [
        [10, true],
        [10, true],
        [5, false],
      ],
    );
    assert.deepEqual(
      pages.flatMap((p) => p.events.map((e) => e.id)),
      emitted,
      'in the order they were written, each once',
    );
    assert.deepEqual(
      Object.keys(pages[0]!.events[0]!).sort(),
      ['actor', 'documentId', 'event', 'id', 'timestamp'],
      'what a webhook delivery says, with the event id',
    );
    const idle = await server.api('GET', '/events', { token: the.admin, query: { after: cursor! } });
    assert.deepEqual([idle.body.events.length, idle.body.cursor, idle.body.more], [0, cursor, false]);

    const later = await emitMany(the.tenant, 3, 'later');
    const other = await startServer({ sameStoreAs: server, worker: false });
    try {
      const otherAdmin = await other.login(ADMIN.name, ADMIN.password);
      assert.deepEqual(
        (await readUntil(other, otherAdmin, cursor, later)).ids,
        later,
        'the same cursor on another node',
      );
    } finally {
      await other.close();
    }
  });

  it('an event whose transaction commits after a later one is not skipped: polling during concurrent writes gets each event exactly once', async () => {
    const { cursor: from } = await readAll(server, the.admin, null);
    // A transaction that writes its event, then waits before it commits…
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let heldId: string | undefined;
    const slow = writeTransaction(server.app.deps.db, server.app.deps.dialect, async (trx) => {
      // A first write gives it its place (on PostgreSQL, its transaction id) before the others'.
      await trx
        .updateTable('organizations')
        .set({ name: sql<string>`name` })
        .where('id', '=', the.legal.organizationId)
        .execute();
      heldId = (
        await emitEvent(trx, {
          ...the.tenant,
          documentId: 'held',
          event: 'documentEdited',
          actor: 'poller-test',
          at: server.app.deps.clock.now(),
        })
      ).eventId;
      await held;
    });
    while (!heldId) await new Promise((resolve) => setTimeout(resolve, 10));
    // …while others write and commit theirs (on SQLite they wait for the one writer), and a poller reads.
    const quick = Promise.all([0, 1, 2, 3, 4].map((i) => emitIds(the.tenant, `quick-${i}`)));
    const seen: string[] = [];
    let cursor = from;
    const poll = async () => {
      const read = await readAll(server, the.admin, cursor);
      seen.push(...read.ids);
      cursor = read.cursor;
    };
    await new Promise((resolve) => setTimeout(resolve, 200));
    // On PostgreSQL the poll answers while the slow transaction is open; SQLite serves it after.
    const during = poll();
    await new Promise((resolve) => setTimeout(resolve, 200));
    release();
    await during;
    const quickIds = (await quick).flat();
    await slow;
    await poll();
    const deadline = Date.now() + 20_000;
    while (seen.length < quickIds.length + 1 && Date.now() < deadline) await poll();
    assert.deepEqual(
      [...seen].sort(),
      [heldId, ...quickIds].sort(),
      'every event once: none missed behind the cursor, none twice',
    );
  });

  it('who sees what: tenant administrators the tenant, an organization administrator the organization, no right no feed; a cursor not given by the feed is 400', async () => {
    const { cursor: tenantFrom } = await readAll(server, the.admin, null);
    const legalToken = await server.login('legal-admin', 'user-password-1');
    const { cursor: legalFrom } = await readAll(server, legalToken, null);
    const inLegal = await emitIds(the.legal, 'legal-doc');
    const tenantOnly = await emitIds(the.tenant, 'tenant-only');
    const asAdmin = await readUntil(server, the.admin, tenantFrom, [...inLegal, ...tenantOnly]);
    const asLegal = await readAll(server, legalToken, legalFrom);
    assert.deepEqual(asLegal.ids, inLegal, 'the organization administrator: their organization’s event only');
    assert.equal(asAdmin.ids.length, 2, 'the tenant administrator: both');

    const rep = await server.login('legal-rep', 'user-password-1');
    assertError(await server.api('GET', '/events', { token: rep }), 403, 'FORBIDDEN');
    for (const after of ['not-a-cursor', Buffer.from('r-1').toString('base64url'), 'eA']) {
      assertError(
        await server.api('GET', '/events', { token: the.admin, query: { after } }),
        400,
        'VALIDATION_ERROR',
      );
    }
    assertError(
      await server.api('GET', '/events', { token: the.admin, query: { limit: '1001' } }),
      400,
      'VALIDATION_ERROR',
    );
  });
});

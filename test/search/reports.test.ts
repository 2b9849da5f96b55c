import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { generateDocuments } from '../fixtures/generate-documents.js';
import { makePdf } from '../helpers/pdf.js';
import { createUser, upload } from '../helpers/server.js';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.08 });

describe('spec Reports: POST /search/reports with esFilters, from/size and scroll', () => {
  const server = useServer();
  let reporter: string;
  let ann: string;
  let bob: string;
  let ivy: string;
  const ids: Record<string, string> = {};

  before(async () => {
    reporter = (await aUser(server, { name: 'reporter', rights: ['use_all_documents_export'] })).token;
    ann = (await aUser(server, { name: 'ann', email: 'ann@example.test' })).token;
    bob = (await aUser(server, { name: 'bob', email: 'bob@example.test' })).token;
    ivy = (await aUser(server, { name: 'ivy', email: 'ivy@example.test', displayName: 'Ivy Signer' })).token;
    const create = async (token: string, title: string) => {
      const pdf = await upload(server, token, makePdf());
      const response = await server.api('POST', '/documents', {
        token,
        body: { body: { documentTitle: title, pdfFile: { content: pdf } } },
      });
      assert.equal(response.status, 200, response.text);
      return response.body.results[0].documentId as string;
    };
    const share = async (token: string, id: string, purpose: string) => {
      const response = await server.api('POST', '/share', {
        token,
        body: { id, data: [{ sharePurpose: purpose, shareTo: 'ivy' }] },
      });
      assert.equal(response.status, 200, response.text);
    };
    // A: ann's, signed by ivy → completed. B: bob's, waiting for ivy → inprogress.
    // C: ann's, only created. D: bob's, only shared for viewing.
    ids.A = await create(ann, 'Alpha lease');
    await share(ann, ids.A, 'sign');
    const signed = await server.api('PUT', '/documents/sign/2', {
      token: ivy,
      body: { id: ids.A, signatures: [{ type: 'signature', pages: [1], position: at(0.1, 0.8) }] },
    });
    assert.equal(signed.status, 200, signed.text);
    ids.B = await create(bob, 'Bravo contract');
    await share(bob, ids.B, 'sign');
    ids.C = await create(ann, 'Charlie memo');
    ids.D = await create(bob, 'Delta 100% report_v2');
    await share(bob, ids.D, 'view');
  });

  const reports = (query: Record<string, unknown>, token = reporter) =>
    server.api('POST', '/search/reports', { token, body: { query } });
  const found = async (esFilters: unknown) => {
    const response = await reports({ esFilters });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.total, response.body.results.length);
    return new Set(
      response.body.results.map((r: { documentId: string }) =>
        Object.keys(ids).find((k) => ids[k] === r.documentId),
      ),
    );
  };
  const nested = (path: string, query: unknown) => ({ bool: { filter: [{ nested: { path, query } }] } });

  it('needs the right use_all_documents_export (403 FORBIDDEN otherwise)', async () => {
    const refused = await reports({}, ann);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'FORBIDDEN');
  });

  it('answers {from, total, results} with documentTitle, documentId, createName, shareStateName and the transaction detail', async () => {
    const response = await reports({ from: 0, size: 10 });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.from, 0);
    assert.equal(response.body.total, 4);
    assert.equal(response.body.scrollId, undefined);
    // Newest first.
    assert.deepEqual(
      response.body.results.map((r: { documentTitle: string }) => r.documentTitle),
      ['Delta 100% report_v2', 'Charlie memo', 'Bravo contract', 'Alpha lease'],
    );
    const alpha = response.body.results[3];
    assert.equal(alpha.documentId, ids.A);
    assert.deepEqual(alpha.createName.name, 'ann');
    assert.equal(alpha.shareStateName, 'completed');
    assert.equal(alpha.transactions.length, 1);
    assert.equal(alpha.transactions[0].shareType, 'sign');
    assert.equal(alpha.transactions[0].sharedWith, 'ivy');
    assert.equal(alpha.transactions[0].status, 'done');
    assert.ok(alpha.transactions[0].actionDate);
    assert.deepEqual(alpha.signers, [
      { name: 'ivy', status: 'done', signedAt: alpha.transactions[0].actionDate },
    ]);
    const page = await reports({ from: 1, size: 2 });
    assert.equal(page.body.from, 1);
    assert.deepEqual(
      page.body.results.map((r: { documentTitle: string }) => r.documentTitle),
      ['Charlie memo', 'Bravo contract'],
    );
  });

  it('the spec’s three filters: by creator, by state, and documents having transactions', async () => {
    assert.deepEqual(
      await found(nested('createName', { term: { 'createName.name': 'ann' } })),
      new Set(['A', 'C']),
    );
    assert.deepEqual(
      await found(nested('workflow', { term: { 'workflow.shareStateName': 'completed' } })),
      new Set(['A']),
    );
    // Documents only created (C) or only viewed (D) are not transactions.
    assert.deepEqual(
      await found(nested('workflow', { exists: { field: 'workflow.shareStateName' } })),
      new Set(['A', 'B']),
    );
  });

  it('by creator: "term `createName.name` = user ID, which may differ from the e-mail": the id the API hands out (`user.id`) finds the same documents as the login name', async () => {
    const annId = (await server.api('GET', '/login', { token: ann })).body.user.id as string;
    const bobId = (await server.api('GET', '/login', { token: bob })).body.user.id as string;
    assert.notEqual(annId, 'ann');
    assert.deepEqual(
      await found(nested('createName', { term: { 'createName.name': annId } })),
      new Set(['A', 'C']),
    );
    assert.deepEqual(
      await found({ terms: { 'createName.name': [bobId, 'ann'] } }),
      new Set(['A', 'B', 'C', 'D']),
    );
    assert.deepEqual(await found({ term: { owner: bobId } }), new Set(['B', 'D']));
    assert.deepEqual(await found({ term: { 'createName.name': 'ann@example.test' } }), new Set());
  });

  it('spec Reports: "scroll.timeout | number": a fractional timeout (1.5) opens and continues a scroll', async () => {
    const first = await reports({ size: 1, scroll: { timeout: 1.5 } });
    assert.equal(first.status, 200, first.text);
    assert.ok(first.body.scrollId);
    const next = await reports({ size: 1, scroll: { timeout: 2.25, id: first.body.scrollId } });
    assert.equal(next.status, 200, next.text);
  });

  it('"`from` integer: 0-based offset": each scroll continuation says where its page starts, not always 0', async () => {
    let response = await reports({ from: 1, size: 1, scroll: { timeout: 30 } });
    const froms = [response.body.from];
    const titles = [response.body.results[0].documentTitle];
    for (let i = 0; i < 3; i++) {
      response = await reports({ size: 1, scroll: { timeout: 30, id: response.body.scrollId } });
      assert.equal(response.status, 200, response.text);
      froms.push(response.body.from);
      titles.push(response.body.results[0]?.documentTitle);
    }
    assert.deepEqual(froms, [1, 2, 3, 4]);
    assert.deepEqual(titles, ['Charlie memo', 'Bravo contract', 'Alpha lease', undefined]);
  });

  it('term, terms, range, exists, match, match_all, bool filter/must/should/must_not and nested transactions', async () => {
    assert.deepEqual(await found({ term: { documentTitle: { value: 'Bravo contract' } } }), new Set(['B']));
    assert.deepEqual(await found({ terms: { 'createName.name': ['bob', 'nobody'] } }), new Set(['B', 'D']));
    assert.deepEqual(await found({ match: { documentTitle: 'LEASE' } }), new Set(['A']));
    // LIKE wildcards in the text are literal characters.
    assert.deepEqual(await found({ match: { documentTitle: '100% report_' } }), new Set(['D']));
    assert.deepEqual(await found({ match: { documentTitle: '_' } }), new Set(['D']));
    assert.deepEqual(await found({ match_all: {} }), new Set(['A', 'B', 'C', 'D']));
    assert.deepEqual(
      await found({ bool: { must_not: [{ exists: { field: 'workflow.shareStateName' } }] } }),
      new Set(['C', 'D']),
    );
    assert.deepEqual(
      await found({
        bool: {
          should: [{ term: { documentTitle: 'Alpha lease' } }, { term: { documentTitle: 'Charlie memo' } }],
        },
      }),
      new Set(['A', 'C']),
    );
    assert.deepEqual(
      await found({
        bool: {
          must: [{ term: { 'createName.name': 'ann' } }],
          should: [{ term: { isSigned: true } }],
          minimum_should_match: 1,
        },
      }),
      new Set(['A']),
    );
    assert.deepEqual(
      await found({
        filter: [{ nested: { path: 'transactions', query: { term: { 'transactions.shareType': 'view' } } } }],
      }),
      new Set(['D']),
    );
    const all = await reports({});
    const created = all.body.results.map((r: { createDate: string }) => r.createDate).sort();
    assert.deepEqual(
      await found({ range: { createDate: { gte: created[2], lte: created[3] } } }),
      new Set(['C', 'D']),
    );
    assert.deepEqual(await found({ range: { createDate: { gt: created[3] } } }), new Set());
  });

  it('values are parameters, never SQL; unknown fields and malformed queries are 400 naming the place', async () => {
    assert.deepEqual(await found({ term: { documentTitle: "x' OR '1'='1" } }), new Set());
    assert.deepEqual(await found({ match: { documentTitle: "'); drop table documents; --" } }), new Set());
    assert.equal((await reports({})).body.total, 4);
    const cases: [unknown, RegExp][] = [
      [
        { term: { password_hash: 'x' } },
        /"query\.esFilters\.term\.password_hash" names an unknown field "password_hash"/,
      ],
      [
        { bool: { filter: [{ wildcard: { documentTitle: 'a*' } }] } },
        /"query\.esFilters\.bool\.filter\[0\]" must have exactly one of/,
      ],
      [
        { range: { createDate: { gte: 'yesterday' } } },
        /"query\.esFilters\.range\.createDate\.gte" must be a valid date/,
      ],
      [
        { range: { createDate: { near: '2026-01-01' } } },
        /"query\.esFilters\.range\.createDate\.near" is not allowed/,
      ],
      [
        { nested: { path: 'secrets', query: { match_all: {} } } },
        /"query\.esFilters\.nested\.path" must be one of/,
      ],
      [
        { term: { 'transactions.status': 'done' } },
        /must be queried inside \{nested:\{path:'transactions'\}\}/,
      ],
      [{ terms: { documentTitle: [] } }, /must be an array of 1 to 1000 values/],
      [{ term: { isSigned: 'yes' } }, /"query\.esFilters\.term\.isSigned" must be a boolean/],
    ];
    for (const [esFilters, message] of cases) {
      const response = await reports({ esFilters });
      assert.equal(response.status, 400, JSON.stringify(esFilters));
      assert.equal(response.body.code, 'VALIDATION_ERROR');
      assert.match(response.body.message, /^Request validation errors: BODY ERRORS: /);
      assert.match(response.body.message, message);
    }
    const deep = { bool: { filter: [] as unknown[] } };
    let node = deep;
    for (let i = 0; i < 12; i++) {
      const next = { bool: { filter: [] as unknown[] } };
      node.bool.filter.push(next);
      node = next;
    }
    assert.equal((await reports({ esFilters: deep })).status, 400);
  });
});

describe('spec Scroll context: reports scrolled through 10,000 documents while more are written', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({ clock });
  let reporter: string;
  let generated: string[];

  before(async () => {
    await createUser(server, {
      name: 'reporter',
      rights: ['use_all_documents_export', 'use_document_management'],
    });
    reporter = await server.login('reporter', 'user-password-1');
    const me = (await server.api('GET', '/login', { token: reporter })).body.user;
    const tenant = await server.app.deps.db
      .selectFrom('users')
      .select(['tenant_id', 'organization_id'])
      .where('id', '=', me.id)
      .executeTakeFirstOrThrow();
    generated = await generateDocuments(server.app.deps.db, {
      tenantId: tenant.tenant_id,
      organizationId: tenant.organization_id,
      ownerId: me.id,
      count: 10_000,
      newest: new Date(clock.now().getTime() - 60_000),
    });
  });

  const reports = (query: Record<string, unknown>) =>
    server.api('POST', '/search/reports', { token: reporter, body: { query } });

  it('pages of 500 visit each of the 10,000 exactly once while documents are being inserted', async () => {
    const seen = new Map<string, number>();
    let response = await reports({ size: 500, scroll: { timeout: 60 } });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.total, 10_000);
    let inserting = true;
    let inserted = 0;
    const writer = (async () => {
      while (inserting) {
        const created = await server.api('POST', '/documents', {
          token: reporter,
          body: { body: { documentTitle: `Written while scrolling ${inserted}` } },
        });
        assert.equal(created.status, 200, created.text);
        inserted += 1;
      }
    })();
    let pages = 0;
    while (response.body.results.length > 0) {
      pages += 1;
      for (const r of response.body.results as { documentId: string }[])
        seen.set(r.documentId, (seen.get(r.documentId) ?? 0) + 1);
      response = await reports({ size: 500, scroll: { timeout: 60, id: response.body.scrollId } });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.total, 10_000, 'the total is the one counted when the scroll opened');
    }
    inserting = false;
    await writer;
    assert.ok(inserted > 0, 'documents were written during the scroll');
    assert.equal(pages, 20);
    assert.equal(seen.size, 10_000);
    for (const id of generated) assert.equal(seen.get(id), 1, `${id} visited once`);
  });

  it('a continuation must use the latest scrollId and the same query; an expired context is 404', async () => {
    const first = await reports({ size: 100, scroll: { timeout: 30 } });
    const second = await reports({ size: 100, scroll: { timeout: 30, id: first.body.scrollId } });
    assert.equal(second.status, 200);
    const older = await reports({ size: 100, scroll: { timeout: 30, id: first.body.scrollId } });
    assert.equal(older.status, 400);
    assert.match(older.body.message, /"scroll\.id" is not the latest scrollId/);
    const otherQuery = await reports({
      esFilters: { term: { documentTitle: 'x' } },
      size: 100,
      scroll: { id: second.body.scrollId },
    });
    assert.equal(otherQuery.status, 400);
    assert.match(otherQuery.body.message, /must repeat the query/);
    // The timeout is refreshed by each request, and counted in seconds.
    clock.advance(25_000);
    const third = await reports({ size: 100, scroll: { id: second.body.scrollId } });
    assert.equal(third.status, 200);
    assert.deepEqual(
      third.body.results
        .map((r: { documentId: string }) => r.documentId)
        .filter((id: string) => second.body.results.some((s: { documentId: string }) => s.documentId === id)),
      [],
    );
    clock.advance(31_000);
    const expired = await reports({ size: 100, scroll: { id: third.body.scrollId } });
    assert.equal(expired.status, 404);
    assert.equal(expired.body.code, 'NOT_FOUND');
  });
});

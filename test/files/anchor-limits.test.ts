import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ANCHOR_LIMITS, findAnchors } from '../../src/pdf/anchors.js';
import { crowdedLinePdf, textPdf } from '../fixtures/hostile-pdfs.js';
import { useServer } from '../helpers/use-server.js';

/** Pages of lines `aaa…a!`: the text on which backtracking patterns like `(a+)+$` explode. */
function worstCasePdf(pages: number, lines = 40, run = 80): Buffer {
  return textPdf(
    Array.from({ length: lines }, () => `${'a'.repeat(run)}!`),
    pages,
  );
}

const WORST_ANCHORS = [
  { id: 'a1', regexp: '(a+)+$' },
  { id: 'a2', regexp: '(a|aa)+$' },
  { id: 'bang', regexp: '(a+)+!' },
];

describe('user-supplied anchor patterns never run unbounded (docs/security.md: Limits)', () => {
  const server = useServer();
  let token: string;
  before(async () => (token = await server.adminToken()));

  const uploadWith = (anchors: unknown, bytes: Buffer, name = 'a.pdf') =>
    server.api('POST', '/files/saveFile', {
      token,
      form: {
        fields: { signatureAnchors: typeof anchors === 'string' ? anchors : JSON.stringify(anchors) },
        file: { name, type: 'application/pdf', bytes },
      },
    });

  /**
   * Sends an anchor upload and resolves `searching` when its search begins: the search reads the
   * stored file (FileStore.read) just before it starts (the upload counted its pages from the stored
   * bytes), and a watcher on the real store (it only passes the call on) says when.
   */
  const uploadWatched = (anchors: unknown, bytes: Buffer) => {
    const files = server.app.deps.files;
    const read = files.read.bind(files);
    let searchStarts!: () => void;
    const searching = new Promise<void>((resolve) => (searchStarts = resolve));
    files.read = async (file) => {
      files.read = read;
      const stored = await read(file);
      searchStarts();
      return stored;
    };
    const state = { done: false };
    const answer = uploadWith(anchors, bytes).finally(() => (state.done = true));
    return { searching, answer, state };
  };

  it('the reproduction: (a+)+$ on a PDF whose text is 32 × a then ! answers 200 with no match (RE2, linear time)', async () => {
    const response = await uploadWith(
      [
        { id: 'a1', regexp: '(a+)+$' },
        { id: 'a2', regexp: '(a+)+!' },
      ],
      textPdf([`${'a'.repeat(32)}!`]),
    );
    assert.equal(response.status, 200, response.text);
    const byId = new Map(
      response.body.anchorPositions.map((a: { id: string; fields: unknown[] }) => [a.id, a.fields]),
    );
    assert.deepEqual(byId.get('a1'), []);
    assert.equal((byId.get('a2') as unknown[]).length, 1);
  });

  it('a pattern RE2 cannot run (backreference, lookahead, lookbehind) is 400 VALIDATION_ERROR naming the field', async () => {
    for (const regexp of ['(a)\\1', '(?=a)a', '(?<=a)b', '(?!x)a']) {
      const response = await uploadWith(
        [
          { id: 'ok', text: 'a' },
          { id: 'x', regexp },
        ],
        textPdf(['aaa']),
      );
      assert.equal(response.status, 400, `${regexp}: ${response.text}`);
      assert.equal(response.body.code, 'VALIDATION_ERROR');
      assert.match(
        response.body.message,
        /^Request validation errors: BODY ERRORS: "signatureAnchors\[1\]\.regexp" uses syntax the linear-time engine \(RE2\) does not run/,
      );
    }
    const broken = await uploadWith([{ id: 'x', regexp: '([' }], textPdf(['aaa']));
    assert.equal(broken.status, 400);
    assert.match(broken.body.message, /"signatureAnchors\[0\]\.regexp" must be a valid regular expression/);
  });

  it(`bounds per request: at most ${ANCHOR_LIMITS.anchors} anchors and ${ANCHOR_LIMITS.patternLength} characters per pattern (400), ${ANCHOR_LIMITS.matches} matches and ${ANCHOR_LIMITS.searchedCharacters} characters searched (413)`, async () => {
    const small = textPdf(['aaa']);
    const tooMany = await uploadWith(
      Array.from({ length: ANCHOR_LIMITS.anchors + 1 }, (_, i) => ({ id: `a${i}`, text: 'a' })),
      small,
    );
    assert.equal(tooMany.status, 400);
    assert.equal(
      tooMany.body.message,
      `Request validation errors: BODY ERRORS: "signatureAnchors" must contain less than or equal to ${ANCHOR_LIMITS.anchors} items`,
    );
    for (const key of ['regexp', 'text']) {
      const long = await uploadWith([{ id: 'x', [key]: 'a'.repeat(ANCHOR_LIMITS.patternLength + 1) }], small);
      assert.equal(long.status, 400, long.text);
      assert.equal(
        long.body.message,
        `Request validation errors: BODY ERRORS: "signatureAnchors[0].${key}" length must be less than or equal to ${ANCHOR_LIMITS.patternLength} characters long`,
      );
    }
    // 2 pages × 80 lines × 80 letters: 12,800 single-letter matches.
    const letters = textPdf(
      Array.from({ length: 80 }, () => 'x'.repeat(80)),
      2,
    );
    const matches = await uploadWith([{ id: 'x', regexp: 'x' }], letters);
    assert.equal(matches.status, 413, matches.text);
    assert.equal(matches.body.code, 'LIMIT_EXCEEDED');
    assert.match(matches.body.message, /more than 10000 matches/);
    // 16 pages of 80 lines of 80 letters (103,664 characters with the spaces between lines) × 100 anchors.
    const searched = await uploadWith(
      Array.from({ length: ANCHOR_LIMITS.anchors }, (_, i) => ({ id: `a${i}`, regexp: `NOWHERE${i}` })),
      textPdf(
        Array.from({ length: 80 }, () => 'x'.repeat(80)),
        16,
      ),
    );
    assert.equal(searched.status, 413, searched.text);
    assert.equal(searched.body.code, 'LIMIT_EXCEEDED');
    assert.match(searched.body.message, /characters one request may search/);
  });

  it('while a worst-case anchor request is searched, another client’s GET /healthz is answered before it completes', async () => {
    const { searching, answer: anchors, state } = uploadWatched(WORST_ANCHORS, worstCasePdf(10));
    await searching;
    const health = await server.api('GET', '//healthz');
    assert.equal(health.status, 200);
    assert.equal(state.done, false, 'GET /healthz waited for the anchor search to finish');
    const response = await anchors;
    assert.equal(response.status, 200, response.text);
    const byId = new Map(
      response.body.anchorPositions.map((a: { id: string; fields: unknown[] }) => [a.id, a.fields]),
    );
    assert.deepEqual(byId.get('a1'), []);
    assert.deepEqual(byId.get('a2'), []);
    assert.equal((byId.get('bang') as unknown[]).length, 10 * 40);
  });

  it('a page whose text takes longer than the search time limit to read is refused (413) when the limit is reached, and the server answers meanwhile (the search runs in a worker)', async () => {
    // One line of 29,000 glyphs: 27 s of text extraction in the PDF engine, in one synchronous call.
    const {
      searching,
      answer: anchors,
      state,
    } = uploadWatched([{ id: 'a1', text: 'SIGN_HERE' }], crowdedLinePdf(1024 * 1024));
    await searching;
    for (let i = 0; i < 3; i++) {
      const health = await server.api('GET', '//healthz');
      assert.equal(health.status, 200);
    }
    assert.equal(state.done, false, 'GET /healthz waited for the anchor search to finish');
    const response = await anchors;
    assert.equal(response.status, 413, response.text);
    assert.equal(response.body.code, 'LIMIT_EXCEEDED');
    assert.match(response.body.message, /took longer than 10 s/);
    // The worker that was ended is replaced: the next search answers.
    const next = await uploadWith([{ id: 'a1', text: 'aaa' }], worstCasePdf(1));
    assert.equal(next.status, 200, next.text);
  });
});

describe('anchor search work is cut into one event-loop turn per page and anchor', () => {
  it('other work runs at least once per page (text) and per page and anchor (matching) during a worst-case search', async () => {
    const pages = 20;
    let turns = 0;
    let searching = true;
    const tick = (): void => {
      turns++;
      if (searching) setImmediate(tick);
    };
    setImmediate(tick);
    const results = await findAnchors({ pdf: worstCasePdf(pages), anchors: WORST_ANCHORS }).finally(
      () => (searching = false),
    );
    assert.equal(results.find((r) => r.id === 'bang')!.fields.length, pages * 40);
    // Counted work, not time: the longest stretch without a turn is one page's text or one anchor on one page.
    assert.ok(
      turns >= pages * (1 + WORST_ANCHORS.length),
      `${turns} turns for ${pages} pages × ${WORST_ANCHORS.length} anchors`,
    );
  });
});

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { readDocument } from '../helpers/documents.js';
import { aUser, withMail } from '../helpers/people.js';
import type { ApiResponse } from '../helpers/server.js';
import { anExternalShare, linkOf, shareDocument, signByLink } from '../helpers/sharing.js';
import { shareTokenOf } from '../helpers/smtp.js';
import { useServer } from '../helpers/use-server.js';

const DAY = 86_400_000;
const DOWNLOAD_DAYS = 3;

const at = (x: number) => [
  { type: 'signature', position: { percentX: x, percentY: 0.85, percentWidth: 0.2, percentHeight: 0.06 } },
];

/**
 * Issue 37, item 9 (DESIGN "Decided this round"): "A share's link has no power once its share has
 * ended (expired, cancelled, delegated away, rejected, document deleted): 401 UNAUTHENTICATED on the
 * API and a human page at /s/…. After a recipient completes, their link (or their recipient session)
 * may download the documents they signed for RECIPIENT_DOWNLOAD_DAYS (default 30), and nothing else.
 * Reminders re-send a link that works; every link a recipient received for a share stays valid while
 * that share is active."
 */
describe('a share link has no power once its share has ended', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({
    smtp: true,
    clock,
    env: { RECIPIENT_DOWNLOAD_DAYS: String(DOWNLOAD_DAYS) },
  });
  const smtp = server.smtp;
  let owner: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
  });

  let documents = 0;
  /** A new document shared with one external recipient (unprotected unless `recipient` says so). */
  async function aLink(recipient: Record<string, unknown> = {}) {
    const title = `Linked ${++documents}`;
    const email = `r${documents}@example.org`;
    const shared = await anExternalShare(server, owner, {
      title,
      email,
      recipient,
      mail: new RegExp(`${title}\\b`),
    });
    const doc = await readDocument(server, owner, shared.id);
    return { id: shared.id, title, email, link: shared.link, mainFile: doc.pdfFile.content as string };
  }
  const openDocument = (token: string) => server.api('GET', '/share/document', { token });
  const loadFile = (token: string, fileId: string) =>
    server.api('GET', `/files/loadFile/hash/${fileId}`, { token });
  function assertError(response: ApiResponse, status: number, code: string, why: string) {
    assert.equal(response.status, status, `${why}: ${response.text}`);
    assert.equal(response.body.code, code, `${why}: ${response.text}`);
  }
  /** Everything the link did before: the document, its file, its first page, a rejection: all 401. */
  async function assertLinkDead(link: string, id: string, mainFile: string, why: string) {
    assertError(await openDocument(link), 401, 'UNAUTHENTICATED', `${why}: GET /share/document`);
    assertError(await loadFile(link, mainFile), 401, 'UNAUTHENTICATED', `${why}: the main file`);
    assertError(
      await server.api('GET', '/share/document/preview', { token: link }),
      401,
      'UNAUTHENTICATED',
      `${why}: the preview`,
    );
    assertError(
      await server.api('PUT', '/share/reject', { token: link, body: { id } }),
      401,
      'UNAUTHENTICATED',
      `${why}: an action`,
    );
    assertError(
      await server.api('GET', '/share/signed', { token: link }),
      401,
      'UNAUTHENTICATED',
      `${why}: a download`,
    );
  }

  it('a link past its validUntil is 401 UNAUTHENTICATED (80 s after it, before any expiry job ran)', async () => {
    const validUntil = new Date(clock.now().getTime() + 60_000).toISOString();
    const { id, link, mainFile } = await aLink({ validUntil });
    assert.equal((await openDocument(link)).status, 200, 'valid before validUntil');
    assert.equal((await loadFile(link, mainFile)).status, 200);
    clock.advance(140_000);
    await assertLinkDead(link, id, mainFile, 'expired');
  });

  it('a link of a cancelled share is 401, and does not show a title changed after the cancel', async () => {
    const { id, link, mainFile } = await aLink();
    assert.equal((await openDocument(link)).status, 200);
    const cancelled = await server.api('POST', '/share/cancel', { token: owner, body: { id } });
    assert.equal(cancelled.status, 200, cancelled.text);
    const doc = await readDocument(server, owner, id);
    const renamed = await server.api('PUT', `/documents/${doc._version}`, {
      token: owner,
      body: { id, body: { documentTitle: 'Renamed after the cancel' } },
    });
    assert.equal(renamed.status, 200, renamed.text);
    await assertLinkDead(link, id, mainFile, 'cancelled');
    const answer = await openDocument(link);
    assert.doesNotMatch(answer.text, /Renamed after the cancel/);
  });

  it('a link of a share delegated away is 401; the delegate’s own link works', async () => {
    const { id, link, mainFile } = await aLink({ rights: ['delegate'] });
    const delegated = await server.api('PUT', '/share/delegate', {
      token: link,
      body: { shareTo: 'delegate37@example.org' },
    });
    assert.equal(delegated.status, 200, delegated.text);
    await assertLinkDead(link, id, mainFile, 'delegated');
    const theirs = await linkOf(smtp, 'delegate37@example.org');
    assert.equal((await openDocument(theirs)).status, 200, 'the delegate opens it');
  });

  it('a link of a share its recipient rejected is 401', async () => {
    const { id, link, mainFile } = await aLink();
    const rejected = await server.api('PUT', '/share/reject', { token: link, body: { id, reason: 'no' } });
    assert.equal(rejected.status, 200, rejected.text);
    await assertLinkDead(link, id, mainFile, 'rejected');
  });

  it('a link to a deleted document is 401 (no title, fields or shares)', async () => {
    const { id, link, mainFile } = await aLink();
    const deleted = await server.api('DELETE', '/documents', {
      token: owner,
      body: { documents: [{ id }] },
    });
    assert.equal(deleted.status, 200, deleted.text);
    await assertLinkDead(link, id, mainFile, 'deleted');
  });

  it('a protected share ends for its link and its recipient session together', async () => {
    const { id, link } = await aLink({ password: 'open-sesame' });
    const unlocked = await server.api('POST', '/share/unlock', {
      token: link,
      body: { password: 'open-sesame' },
    });
    assert.equal(unlocked.status, 200, unlocked.text);
    const session = unlocked.body.token as string;
    assert.equal((await openDocument(session)).status, 200);
    assert.equal((await server.api('POST', '/share/cancel', { token: owner, body: { id } })).status, 200);
    assertError(await openDocument(session), 401, 'UNAUTHENTICATED', 'the session');
    assertError(await openDocument(link), 401, 'UNAUTHENTICATED', 'the link');
    assertError(
      await server.api('POST', '/share/unlock', { token: link, body: { password: 'open-sesame' } }),
      401,
      'UNAUTHENTICATED',
      'unlocking',
    );
  });

  it('a reminder re-sends a link that works, and the invitation’s link keeps working while the share is active; all end with it', async () => {
    const { id, email, link: invitation, mainFile } = await aLink();
    const reminded = await server.api('POST', '/share/reminder', { token: owner, body: { documentId: id } });
    assert.equal(reminded.status, 200, reminded.text);
    const reminder = shareTokenOf(await smtp.waitFor(email, /Reminder: please sign/));
    assert.notEqual(reminder, invitation);
    for (const link of [invitation, reminder]) {
      assert.equal((await openDocument(link)).status, 200, 'both links open the share');
      assert.equal((await loadFile(link, mainFile)).status, 200);
    }
    assert.equal((await server.api('POST', '/share/cancel', { token: owner, body: { id } })).status, 200);
    for (const link of [invitation, reminder]) await assertLinkDead(link, id, mainFile, 'cancelled');
  });

  it('GET /share/signed before acting is 409; the live link reads the document', async () => {
    const { link } = await aLink();
    assertError(await server.api('GET', '/share/signed', { token: link }), 409, 'CONFLICT', 'nothing signed');
    assert.equal((await openDocument(link)).status, 200);
  });

  it('/s/<link> of an ended share is a page that says so (410, no signer page, no stack); a live one is the signer page; a completed one offers the download', async () => {
    const page = (token: string) => fetch(`${server.url}/s/${token}`);
    const live = await aLink();
    const open = await page(live.link);
    assert.equal(open.status, 200);
    assert.match(open.headers.get('content-type') ?? '', /^text\/html/);

    const { id, link } = await aLink();
    assert.equal((await server.api('POST', '/share/cancel', { token: owner, body: { id } })).status, 200);
    const ended = await page(link);
    assert.equal(ended.status, 410);
    assert.match(ended.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(ended.headers.get('cache-control'), 'no-store');
    assert.equal(ended.headers.get('referrer-policy'), 'no-referrer');
    const html = await ended.text();
    assert.match(html, /<h1>This link has ended<\/h1>/);
    assert.doesNotMatch(html, /<script|Error:|at \w+ \(|UNAUTHENTICATED/, 'a page for a person');
    assert.doesNotMatch(html, new RegExp(link), 'the token is not echoed');

    const unknown = await page('shr_never-issued');
    assert.equal(unknown.status, 404);
    assert.match(await unknown.text(), /This link does not work/);

    const signer = await aLink();
    assert.equal((await signByLink(server, signer.link, signer.id, at(0.1))).status, 200);
    const done = await page(signer.link);
    assert.equal(done.status, 200);
    const doneHtml = await done.text();
    assert.match(doneHtml, /You have already responded/);
    assert.match(doneHtml, /href="\/api\/v1\/share\/signed\?token=shr_[\w-]+"/);
    assert.doesNotMatch(doneHtml, /<script/);
  });

  it(`a completed recipient downloads what they signed for RECIPIENT_DOWNLOAD_DAYS (${DOWNLOAD_DAYS}), and nothing else: not the next round’s file`, async () => {
    const { id, link, mainFile } = await aLink();
    assert.equal((await signByLink(server, link, id, at(0.1))).status, 200);
    const round1 = await readDocument(server, owner, id);
    assert.equal(round1.workflow.shareStateName, 'completed');
    const signedFile = round1.pdfFile.content as string;
    assert.notEqual(signedFile, mainFile);

    const copy = await server.api('GET', '/share/signed', { token: link });
    assert.equal(copy.status, 200, copy.text);
    assert.match(copy.headers.get('content-disposition') ?? '', /^attachment/);
    assert.equal(copy.headers.get('x-content-type-options'), 'nosniff');
    assert.match(copy.text, /^%PDF-/);
    assert.equal((await loadFile(link, signedFile)).status, 200, 'the signed file by its id');
    for (const [what, call] of [
      ['the document', () => openDocument(link)],
      ['its preview', () => server.api('GET', '/share/document/preview', { token: link })],
      ['a rejection', () => server.api('PUT', '/share/reject', { token: link, body: { id } })],
    ] as const) {
      assertError(await call(), 403, 'FORBIDDEN', `after signing, ${what}`);
    }

    // The owner sends the document again: a new round, on a new file, that is not the signer's.
    clock.advance(1000);
    await shareDocument(server, owner, id, { to: 'round2@example.org' });
    const next = await linkOf(smtp, 'round2@example.org');
    assert.equal((await signByLink(server, next, id, at(0.5))).status, 200);
    const round2 = (await readDocument(server, owner, id)).pdfFile.content as string;
    assert.notEqual(round2, signedFile);
    assertError(await loadFile(link, round2), 404, 'NOT_FOUND', 'the next round’s file');
    const again = await server.api('GET', '/share/signed', { token: link });
    assert.equal(again.status, 200);
    assert.equal(again.text, copy.text, 'still the file of their own round');

    clock.advance(DOWNLOAD_DAYS * DAY);
    assertError(
      await server.api('GET', '/share/signed', { token: link }),
      401,
      'UNAUTHENTICATED',
      'after RECIPIENT_DOWNLOAD_DAYS',
    );
    assertError(await loadFile(link, signedFile), 401, 'UNAUTHENTICATED', 'the file, after the period');
  });
});

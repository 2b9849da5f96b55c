import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { expireShares } from '../../src/sharing/scheduled.js';
import { aDocument, signDocument } from '../helpers/documents.js';
import { aUser, someUsers, withMail } from '../helpers/people.js';
import { USER_PASSWORD } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { createWebhook, useReceiver, waitFor } from '../webhooks/helpers.js';

const at = (x: number) => ({ percentX: x, percentY: 0.85, percentWidth: 0.15, percentHeight: 0.06 });

/**
 * spec Document share state table, driven end to end on one document: every transition, re-sending
 * from each end state ("any → POST /share (purpose sign) → inprogress"), and the share states
 * (active, waiting, done, rejected, cancelled, expired), with the webhook events and the mails of
 * each step.
 */
describe('spec Document share state: every transition, with webhooks and mails', () => {
  const clock = new ManualClock(new Date());
  const receiver = useReceiver();
  const server = useServer(() => ({ smtp: true, clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } }));
  const smtp = server.smtp;
  let owner: string;
  let id: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
    await someUsers(server, ['ivy', 'jon', 'kim'].map(withMail));
    await createWebhook(server, await server.adminToken(), { type: 'tenant', callbackUrl: receiver.url });
    id = await aDocument(server, owner, { title: 'Lifecycle' });
  });

  const read = async () => (await server.api('GET', `/documents/${id}`, { token: owner })).body.results[0];
  const state = async () => (await read()).workflow.shareStateName as string | undefined;
  const shareStatuses = async () =>
    (
      await server.app.deps.db
        .selectFrom('shares')
        .select(['share_to', 'status'])
        .where('document_id', '=', id)
        .orderBy('created_at')
        .orderBy('position')
        .execute()
    ).map((s) => `${s.share_to}:${s.status}`);
  const send = async (data: unknown[], extra: Record<string, unknown> = {}) => {
    // Each round's shares are created a moment after the last (shareStatuses orders by creation).
    clock.advance(1000);
    const response = await server.api('POST', '/share', { token: owner, body: { id, data, ...extra } });
    assert.equal(response.status, 200, response.text);
  };
  const login = (name: string) => server.login(name, USER_PASSWORD);
  const signAs = async (name: string, x: number) => {
    const response = await signDocument(
      server,
      await login(name),
      id,
      [{ type: 'signature', position: at(x) }],
      owner,
    );
    assert.equal(response.status, 200, response.text);
  };
  /** The webhook events received for the document so far, in order. */
  const expectedEvents: string[] = ['documentCreated'];
  async function eventsAre(...next: string[]) {
    expectedEvents.push(...next);
    const mine = () => receiver.received.filter((r) => r.json.documentId === id).map((r) => r.json.event);
    await waitFor(
      () => mine().length >= expectedEvents.length,
      10_000,
      `events ${expectedEvents.join(', ')}`,
    );
    assert.deepEqual(mine(), expectedEvents);
  }
  const mails = (to: string) => smtp.messages.filter((m) => m.to.includes(to)).length;
  async function mailed(to: string, count: number) {
    await waitFor(() => mails(to) >= count, 10_000, `${count} mails to ${to}`);
    assert.equal(mails(to), count, `mails to ${to}`);
  }

  it('created → inprogress → completed → (re-send) inprogress → rejected → (re-send) → cancelled → (re-send) → expired → (re-send, sequential) → completed', async () => {
    await eventsAre();
    assert.equal(await state(), undefined, 'a new document has no share state');

    // (document created) → POST /share (sign) → inprogress: the recipient is notified.
    await send([{ sharePurpose: 'sign', shareTo: 'ivy' }]);
    assert.equal(await state(), 'inprogress');
    assert.deepEqual(await shareStatuses(), ['ivy:active']);
    await eventsAre('signRequest');
    await mailed('ivy@example.test', 1);

    // inprogress → all required signatures collected → completed (documentCompleted); the owner is told.
    await signAs('ivy', 0.05);
    assert.equal(await state(), 'completed');
    assert.deepEqual(await shareStatuses(), ['ivy:done']);
    await eventsAre('documentSigned', 'documentCompleted');
    await mailed('owner@example.test', 1);

    // completed → POST /share (sign) → inprogress: a new round on the current file.
    await send([{ sharePurpose: 'sign', shareTo: 'jon' }]);
    assert.equal(await state(), 'inprogress');
    await eventsAre('signRequest');
    await mailed('jon@example.test', 1);

    // inprogress → the recipient rejects → rejected (signRejected); the owner is told why.
    const rejected = await server.api('PUT', '/share/reject', {
      token: await login('jon'),
      body: { id, reason: 'wrong figures' },
    });
    assert.equal(rejected.status, 200, rejected.text);
    assert.equal(await state(), 'rejected');
    assert.deepEqual(await shareStatuses(), ['ivy:done', 'jon:rejected']);
    await eventsAre('signRejected');
    await mailed('owner@example.test', 2);

    // rejected → POST /share → inprogress; then the owner cancels → cancelled (signCancelled).
    await send([{ sharePurpose: 'sign', shareTo: 'kim' }]);
    assert.equal(await state(), 'inprogress');
    await eventsAre('signRequest');
    await mailed('kim@example.test', 1);
    assert.equal((await server.api('POST', '/share/cancel', { token: owner, body: { id } })).status, 200);
    assert.equal(await state(), 'cancelled');
    assert.deepEqual(await shareStatuses(), ['ivy:done', 'jon:rejected', 'kim:cancelled']);
    await eventsAre('signCancelled');

    // cancelled → POST /share → inprogress; the signer's validUntil passes → expired (signExpired).
    await send([
      {
        sharePurpose: 'sign',
        shareTo: 'ivy',
        validUntil: new Date(clock.now().getTime() + 60_000).toISOString(),
      },
    ]);
    assert.equal(await state(), 'inprogress');
    await eventsAre('signRequest');
    await mailed('ivy@example.test', 2);
    clock.advance(120_000);
    await expireShares(server.app.deps, clock.now());
    assert.equal(await state(), 'expired');
    assert.deepEqual((await shareStatuses()).slice(-1), ['ivy:expired']);
    await eventsAre('signExpired');

    // expired → POST /share (sequential) → inprogress: jon waits for his turn and is told when it comes.
    await send(
      [
        { sharePurpose: 'sign', shareTo: 'ivy' },
        { sharePurpose: 'sign', shareTo: 'jon' },
      ],
      { sequential: true },
    );
    assert.equal(await state(), 'inprogress');
    assert.deepEqual((await shareStatuses()).slice(-2), ['ivy:active', 'jon:waiting']);
    await eventsAre('signRequest');
    await mailed('ivy@example.test', 3);
    assert.equal(mails('jon@example.test'), 1, 'jon is not told before his turn');
    await signAs('ivy', 0.3);
    assert.deepEqual((await shareStatuses()).slice(-2), ['ivy:done', 'jon:active']);
    assert.equal(await state(), 'inprogress');
    await eventsAre('documentSigned');
    await mailed('jon@example.test', 2);
    await signAs('jon', 0.6);
    assert.equal(await state(), 'completed');
    assert.deepEqual((await read()).waitingFor, []);
    await eventsAre('documentSigned', 'documentCompleted');
    await mailed('owner@example.test', 3);
  });
});

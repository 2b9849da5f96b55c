import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { before, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { expireShares } from '../../src/sharing/scheduled.js';
import { aDocument, eventsOf, readDocument, signDocument } from '../helpers/documents.js';
import { makePdf } from '../helpers/pdf.js';
import { aUser, someUsers, withMail } from '../helpers/people.js';
import { createUser, USER_PASSWORD } from '../helpers/server.js';
import { shareTokenOf } from '../helpers/smtp.js';
import { auditOf } from '../helpers/audit-log.js';
import { useServer } from '../helpers/use-server.js';

const at = (x: number) => ({ percentX: x, percentY: 0.85, percentWidth: 0.2, percentHeight: 0.06 });

/**
 * Issue 24: no document gets stuck, every rule of the spec's sharing workflow holds (spec Sharing,
 * Reminders, Document share state table).
 */
describe('the sharing workflow holds at its edges', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({
    smtp: true,
    clock,
    env: {
      PUBLIC_URL: 'https://sign.example.test',
      OIDC_PROVIDERS: JSON.stringify([
        { name: 'corp', label: 'Corp', issuer: 'https://idp.example.test', clientId: 'signery' },
      ]),
    },
  });
  const smtp = server.smtp;
  let owner: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
    await someUsers(server, ['ivy', 'jon', 'kim'].map(withMail));
  });

  const newDoc = (title: string) => aDocument(server, owner, { title, pdf: { pages: 2 } });
  const share = (id: string, data: unknown[], extra: Record<string, unknown> = {}) =>
    server.api('POST', '/share', { token: owner, body: { id, data, ...extra } });
  const read = (id: string) => readDocument(server, owner, id);
  const state = async (id: string) => (await read(id)).workflow.shareStateName as string;
  const signAs = async (name: string, id: string, x = 0.1) =>
    signDocument(
      server,
      await server.login(name, USER_PASSWORD),
      id,
      [{ type: 'signature', position: at(x) }],
      owner,
    );
  const actAs = async (name: string, id: string) =>
    server.api('POST', '/share/execute', {
      token: await server.login(name, USER_PASSWORD),
      body: { id },
    });
  const events = (id: string) => eventsOf(server, id);
  const audit = async (id: string, activityType: string) =>
    (await auditOf(server, id, activityType)).map((record) => record.data);
  const mailsTo = (address: string) => smtp.messages.filter((m) => m.to.includes(address)).length;

  it('spec Document share state: "`expired` = the process ended without completion": only a share that owes an action expires the process; a view share expires alone, named in the audit', async () => {
    const id = await newDoc('Short view');
    const soon = new Date(clock.now().getTime() + 2000).toISOString();
    const shared = await share(id, [
      { sharePurpose: 'sign', shareTo: 'ivy' },
      { sharePurpose: 'view', shareTo: 'jon', validUntil: soon },
    ]);
    assert.equal(shared.status, 200, shared.text);
    clock.advance(60_000);
    await expireShares(server.app.deps, clock.now());
    assert.equal(await state(id), 'inprogress', 'the view share does not end the process');
    assert.ok(!(await events(id)).includes('signExpired'));
    const [viewExpiry] = await audit(id, 'shareExpired');
    assert.equal(viewExpiry?.shareTo, 'jon');
    assert.equal(viewExpiry?.purpose, 'view');
    const signed = await signAs('ivy', id);
    assert.equal(signed.status, 200, signed.text);
    assert.equal(signed.body.shareStateName, 'completed');

    const expiring = await newDoc('Short sign');
    await share(expiring, [
      {
        sharePurpose: 'sign',
        shareTo: 'kim',
        validUntil: new Date(clock.now().getTime() + 2000).toISOString(),
      },
    ]);
    clock.advance(60_000);
    await expireShares(server.app.deps, clock.now());
    assert.equal(await state(expiring), 'expired');
    assert.ok((await events(expiring)).includes('signExpired'));
    const [expiry] = await audit(expiring, 'signExpired');
    assert.equal(expiry?.shareTo, 'kim', 'the audit names the share that expired');
    assert.equal(expiry?.purpose, 'sign');
  });

  it('spec Share `isMandatory`: an optional signer never holds the document: not in waitingFor, and it completes without them', async () => {
    const id = await newDoc('Optional signer');
    const shared = await share(id, [
      { sharePurpose: 'sign', shareTo: 'ivy' },
      { sharePurpose: 'sign', shareTo: 'jon', isMandatory: false },
    ]);
    assert.equal(shared.status, 200, shared.text);
    assert.deepEqual((await read(id)).waitingFor, ['ivy']);
    const signed = await signAs('ivy', id);
    assert.equal(signed.status, 200, signed.text);
    assert.equal(signed.body.shareStateName, 'completed');
    const jon = await server.app.deps.db
      .selectFrom('shares')
      .select(['status', 'next_reminder_at'])
      .where('document_id', '=', id)
      .where('share_to', '=', 'jon')
      .executeTakeFirstOrThrow();
    assert.equal(jon.status, 'notRequired', 'the optional share is no longer awaited');
  });

  it('spec Document share state: "inprogress → all required signatures collected → completed", and issue 24: "completion waits for every mandatory action in the workflow, not only signatures": in a sequence [sign, approve] the document completes only after the approval', async () => {
    const id = await newDoc('Sign then approve');
    const shared = await share(
      id,
      [
        { sharePurpose: 'sign', shareTo: 'ivy' },
        { sharePurpose: 'approve', shareTo: 'jon' },
      ],
      { sequential: true },
    );
    assert.equal(shared.status, 200, shared.text);
    const signed = await signAs('ivy', id);
    assert.equal(signed.status, 200, signed.text);
    assert.equal(signed.body.shareStateName, 'inprogress', 'the approval is still owed');
    assert.deepEqual((await read(id)).waitingFor, ['jon']);
    assert.equal((await actAs('jon', id)).status, 200);
    assert.equal(await state(id), 'completed');
    assert.deepEqual((await events(id)).slice(-2), ['documentSimpleActionExecuted', 'documentCompleted']);
  });

  it('spec Reminders: "only shares with pending actions (sign, approve, review) get reminders": no automatic reminder for a view share, none once the document ended', async () => {
    const id = await newDoc('Reminded');
    const start = new Date(clock.now().getTime() + 60_000).toISOString();
    const shared = await share(id, [
      { sharePurpose: 'sign', shareTo: 'rsign@example.org', automaticReminder: { start, intervalDays: 1 } },
      { sharePurpose: 'view', shareTo: 'rview@example.org', automaticReminder: { start, intervalDays: 1 } },
    ]);
    assert.equal(shared.status, 200, shared.text);
    await smtp.waitFor('rsign@example.org');
    await smtp.waitFor('rview@example.org');
    clock.advance(2 * 60_000);
    for (let i = 0; i < 100 && mailsTo('rsign@example.org') < 2; i++) await sleep(100);
    assert.equal(mailsTo('rsign@example.org'), 2, 'the signer is reminded');
    assert.equal(mailsTo('rview@example.org'), 1, 'the viewer only got the invitation');
    assert.equal((await server.api('POST', '/share/cancel', { token: owner, body: { id } })).status, 200);
    clock.advance(3 * 86_400_000);
    await sleep(1500);
    assert.equal(mailsTo('rsign@example.org'), 2, 'no reminder once the document ended');
    assert.equal(mailsTo('rview@example.org'), 1);
  });

  it('spec Sharing: `allowedOAuths` "allowed third-party identity providers": a provider that is not configured is refused at share time, naming it', async () => {
    const id = await newDoc('Providers');
    const refused = await share(id, [
      { sharePurpose: 'sign', shareTo: 'oauth@example.org', allowedOAuths: ['corp', 'nowhere'] },
    ]);
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.body.message, /allowedOAuths\[1\].*nowhere/);
    const accepted = await share(id, [
      { sharePurpose: 'sign', shareTo: 'oauth@example.org', allowedOAuths: ['CORP'] },
    ]);
    assert.equal(accepted.status, 200, accepted.text);
    const edited = await server.api('PUT', '/share', {
      token: owner,
      body: { data: [{ shareId: accepted.body[0].shareId, allowedOAuths: ['elsewhere'] }] },
    });
    assert.equal(edited.status, 400, edited.text);
    assert.match(edited.body.message, /elsewhere/);
  });

  it('spec Document share state table: "any → POST /share (purpose sign) → inprogress": a completed, cancelled, rejected or expired document is sent again', async () => {
    const completed = await newDoc('Again after completion');
    await share(completed, [{ sharePurpose: 'sign', shareTo: 'ivy' }]);
    assert.equal((await signAs('ivy', completed, 0.1)).body.shareStateName, 'completed');
    const again = await share(completed, [{ sharePurpose: 'sign', shareTo: 'jon' }]);
    assert.equal(again.status, 200, again.text);
    assert.equal(await state(completed), 'inprogress');
    assert.deepEqual((await read(completed)).waitingFor, ['jon']);
    const second = await signAs('jon', completed, 0.5);
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.shareStateName, 'completed');

    const cancelled = await newDoc('Again after cancel');
    await share(cancelled, [{ sharePurpose: 'sign', shareTo: 'ivy' }]);
    await server.api('POST', '/share/cancel', { token: owner, body: { id: cancelled } });
    assert.equal(await state(cancelled), 'cancelled');
    assert.equal((await share(cancelled, [{ sharePurpose: 'sign', shareTo: 'ivy' }])).status, 200);
    assert.equal(await state(cancelled), 'inprogress');
    assert.equal((await signAs('ivy', cancelled)).body.shareStateName, 'completed');
  });

  it('spec Sharing rule 5: "PUT /share/{shareId}/recipient is removed; PUT /share replaces it": `shareTo` moves a pending share to a new recipient; the old link stops, the new one is mailed, the audit says who changed what', async () => {
    const id = await newDoc('Corrected');
    const [created] = (await share(id, [{ sharePurpose: 'sign', shareTo: 'wrong@example.org' }])).body;
    const oldToken = shareTokenOf(await smtp.waitFor('wrong@example.org', /Corrected/));
    const moved = await server.api('PUT', '/share', {
      token: owner,
      body: { data: [{ shareId: created.shareId, shareTo: 'right@example.org' }] },
    });
    assert.equal(moved.status, 200, moved.text);
    assert.deepEqual(moved.body[0].sharedWith, ['right@example.org']);
    assert.deepEqual(moved.body[0].oauthFactors, [{ type: 'email', value: 'right@example.org' }]);
    assert.deepEqual((await read(id)).waitingFor, ['right@example.org']);
    const old = await server.api('GET', '/share/document', { token: oldToken });
    assert.equal(old.status, 401, 'the old link no longer opens anything');
    const newToken = shareTokenOf(await smtp.waitFor('right@example.org', /Corrected/));
    assert.equal((await server.api('GET', '/share/document', { token: newToken })).status, 200);
    const [change] = await audit(id, 'shareRecipientChanged');
    assert.deepEqual(
      { from: change?.from, to: change?.to, shareId: change?.shareId },
      { from: 'wrong@example.org', to: 'right@example.org', shareId: created.shareId },
    );
    const toUser = await server.api('PUT', '/share', {
      token: owner,
      body: { data: [{ shareId: created.shareId, shareTo: 'kim' }] },
    });
    assert.equal(toUser.status, 200, toUser.text);
    assert.deepEqual((await read(id)).waitingFor, ['kim']);
    assert.equal((await server.api('GET', '/share/document', { token: newToken })).status, 401);
    assert.equal((await signAs('kim', id)).body.shareStateName, 'completed');
  });

  it('Contract: "`waitingFor` (recipients who still owe an action)": deleting a pending signer removes them from the workflow: not waited for, never reminded', async () => {
    await createUser(server, withMail('leaver'));
    const leaverId = (
      await server.app.deps.db
        .selectFrom('users')
        .select('id')
        .where('name', '=', 'leaver')
        .executeTakeFirstOrThrow()
    ).id;
    const id = await newDoc('Leaver');
    const start = new Date(clock.now().getTime() + 60_000).toISOString();
    await share(id, [
      { sharePurpose: 'sign', shareTo: 'ivy' },
      { sharePurpose: 'sign', shareTo: 'leaver', automaticReminder: { start, intervalDays: 1 } },
    ]);
    await smtp.waitFor('leaver@example.test', /Leaver/);
    assert.deepEqual((await read(id)).waitingFor, ['ivy', 'leaver']);
    const deleted = await server.api('DELETE', `/users/${leaverId}`, { token: await server.adminToken() });
    assert.equal(deleted.status, 200, deleted.text);
    assert.deepEqual((await read(id)).waitingFor, ['ivy']);
    clock.advance(3 * 86_400_000);
    await sleep(1500);
    assert.equal(mailsTo('leaver@example.test'), 1, 'only the invitation');
    assert.equal((await signAs('ivy', id)).body.shareStateName, 'completed');
  });

  it('spec Signature field: "customId may be empty": a required text field and a required file field without customId are answered by their own fieldId', async () => {
    const email = 'fields@example.org';
    const id = await newDoc('Fields without ids');
    const position = { percentX: 0.1, percentY: 0.1, percentWidth: 0.2, percentHeight: 0.05 };
    const shared = await share(id, [{ sharePurpose: 'sign', shareTo: email }], {
      signatureFields: [
        {
          type: 'annotation',
          subtype: 'annotation_generic',
          required: true,
          user: [email],
          position,
          pages: [2],
        },
        { type: 'annotation', subtype: 'annotation_submitted_file', required: true, user: [email], position },
        // Where the recipient signs: recipients draw only in their fields (issue 40).
        { type: 'signature', user: [email], position },
      ],
    });
    assert.equal(shared.status, 200, shared.text);
    const [textField, fileField] = shared.body[0].signatureFields;
    assert.match(textField.fieldId, /^fld_/);
    assert.match(fileField.fieldId, /^fld_/);
    assert.notEqual(textField.fieldId, fileField.fieldId);
    const token = shareTokenOf(await smtp.waitFor(email, /Fields without ids/));
    const shown = (await server.api('GET', '/share/document', { token })).body.results[0];
    assert.deepEqual(
      shown.signatureFields.map((f: { fieldId: string }) => f.fieldId).slice(0, 2),
      [textField.fieldId, fileField.fieldId],
      'the recipient sees the same identities',
    );
    const submitted = await server.api('POST', '/share/upload/submittedFile', {
      token,
      form: {
        fields: { fieldId: fileField.fieldId },
        file: { name: 'proof.pdf', type: 'application/pdf', bytes: makePdf() },
      },
    });
    assert.equal(submitted.status, 200, submitted.text);
    const sign = async (annotations: unknown[]) =>
      server.api('PUT', `/share/document/sign/${(await read(id))._version}`, {
        token,
        body: { id, signatures: [{ type: 'signature', pages: [1], position }], annotations },
      });
    const unanswered = await sign([]);
    assert.equal(unanswered.status, 400, unanswered.text);
    assert.match(unanswered.body.message, new RegExp(`"fieldId": "${textField.fieldId}"`));
    const signed = await sign([{ fieldId: textField.fieldId, text: 'Berlin', pages: [2], position }]);
    assert.equal(signed.status, 200, signed.text);
    assert.equal(await state(id), 'completed');
  });

  it('issue 24: "never accept a share whose fields cannot be completed": pages beyond the document, required fields no recipient can answer', async () => {
    const id = await newDoc('Uncompletable');
    const position = { percentX: 0.1, percentY: 0.1, percentWidth: 0.2, percentHeight: 0.05 };
    const page3 = await share(id, [{ sharePurpose: 'sign', shareTo: 'ivy' }], {
      signatureFields: [{ type: 'signature', user: ['ivy'], position, pages: [3] }],
    });
    assert.equal(page3.status, 400, page3.text);
    assert.match(page3.body.message, /"signatureFields\[0\]\.pages\[0\]" must be less than or equal to 2/);
    const viewer = await share(id, [{ sharePurpose: 'view', shareTo: 'jon' }], {
      signatureFields: [{ type: 'annotation', required: true, user: ['jon'], position }],
    });
    assert.equal(viewer.status, 400, viewer.text);
    // Issue 40: a field goes only to recipients the signer's page shows it to (signers).
    assert.match(
      viewer.body.message,
      /"signatureFields\[0\]" goes to a recipient asked to view, who would never see it/,
    );
    const nobody = await share(id, [{ sharePurpose: 'sign', shareTo: 'ivy' }], {
      signatureFields: [
        { type: 'annotation', subtype: 'annotation_submitted_file', required: true, position },
      ],
    });
    assert.equal(nobody.status, 400, nobody.text);
    assert.match(nobody.body.message, /no one could submit its file/);
    assert.equal(await state(id), undefined, 'nothing was shared');
  });
});

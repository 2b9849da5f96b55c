import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { before, describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { aDocument, eventsOf, readDocument } from '../helpers/documents.js';
import { configuredProviders } from '../helpers/oidc.js';
import { aUser, someUsers, withMail } from '../helpers/people.js';
import { USER_PASSWORD } from '../helpers/server.js';
import { smsCodeTo } from '../helpers/sharing.js';
import { decode, shareTokenOf, type ReceivedMail } from '../helpers/smtp.js';
import { useServer } from '../helpers/use-server.js';

describe('spec Sharing: POST /share, recipients, protection and the workflow', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({
    smtp: true,
    clock,
    env: {
      PUBLIC_URL: 'https://sign.example.test',
      OIDC_PROVIDERS: configuredProviders('uaepass', 'google'),
    },
  });
  const smtp = server.smtp;
  let owner: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
    await someUsers(server, ['ivy', 'jon'].map(withMail));
  });

  const newDoc = (title = 'Agreement') => aDocument(server, owner, { title, pdf: null });
  const share = (id: string, data: unknown[], extra: Record<string, unknown> = {}) =>
    server.api('POST', '/share', { token: owner, body: { id, data, ...extra } });
  const doc = (id: string) => readDocument(server, owner, id);
  /** PUT /share as the owner: edits of pending shares. */
  const editShares = (data: Record<string, unknown>[]) =>
    server.api('PUT', '/share', { token: owner, body: { data } });
  /** A new document shared for signing with `shareTo`, who may delegate: its id and the share created. */
  const aDelegableShare = async (title: string, shareTo: string) => {
    const id = await newDoc(title);
    const [created] = (await share(id, [{ sharePurpose: 'sign', shareTo, rights: ['delegate'] }])).body;
    return { id, created };
  };

  it('answers the Share objects; internal and external recipients; the external one gets a link by e-mail', async () => {
    const id = await newDoc('Lease');
    const response = await share(id, [
      {
        sharePurpose: 'approve',
        shareTo: 'ivy',
        message: 'Please approve',
        language: 'de',
        rights: ['print'],
      },
      {
        sharePurpose: 'view',
        shareTo: 'guest@example.org',
        phone: '+41 79 123 45 67',
        validUntil: new Date(clock.now().getTime() + 86_400_000).toISOString(),
      },
    ]);
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.length, 2);
    const [internal, external] = response.body;
    assert.equal(internal.shareType, 'approve');
    assert.deepEqual(internal.sharedWith, ['ivy']);
    assert.equal(internal.sharedBy, 'owner');
    assert.equal(internal.sharedByDisplayName, 'owner', 'no display name: the login name');
    assert.equal(internal.sharedObjectEsId, id);
    assert.equal(internal.sharedObjectType, 'document');
    assert.equal(internal.privateMessage, 'Please approve');
    assert.equal(internal.language, 'de');
    assert.deepEqual(internal.rights, ['print']);
    assert.equal(internal.tokenGenerated, false);
    assert.deepEqual(internal.oauthFactors, [{ type: 'email', value: 'ivy@example.test' }]);
    assert.equal(external.otpEnabled, true);
    assert.equal(external.otpPhone, '********4567');
    assert.equal(external.tokenGenerated, true);
    assert.equal(external.passwordRequired, false);
    for (const key of [
      'shareId',
      'isActive',
      'messageRead',
      'sequential',
      'isDelegated',
      'isMandatory',
      'shareDate',
      'validUntil',
      'shareGroup',
    ]) {
      assert.ok(key in internal, key);
    }
    assert.ok(!response.text.includes('shr_'), 'the link never appears in the sharer’s answer');
    const mail = await smtp.waitFor('guest@example.org', /sign\.example\.test\/s\/shr_/);
    assert.match(shareTokenOf(mail), /^shr_/);
    const german = await smtp.waitFor('ivy@example.test');
    assert.match(german.raw, /Subject: =\?UTF-8\?|Bitte/);
    assert.deepEqual((await doc(id)).waitingFor, ['ivy']);
  });

  it('spec Share "language, dateFormat, timeFormat": a Share object answers the ones in use, the defaults when none were sent', async () => {
    const id = await newDoc('Defaults');
    const response = await share(id, [
      { sharePurpose: 'view', shareTo: 'jon' },
      {
        sharePurpose: 'view',
        shareTo: 'guest2@example.org',
        language: 'fr',
        dateFormat: 'dd.MM.yyyy',
        timeFormat: 'HH:mm',
      },
    ]);
    assert.equal(response.status, 200, response.text);
    const [plain, chosen] = response.body;
    assert.deepEqual(
      { language: plain.language, dateFormat: plain.dateFormat, timeFormat: plain.timeFormat },
      { language: 'en', dateFormat: 'yyyy-MM-dd', timeFormat: 'HH:mm:ss' },
    );
    assert.deepEqual(
      { language: chosen.language, dateFormat: chosen.dateFormat, timeFormat: chosen.timeFormat },
      { language: 'fr', dateFormat: 'dd.MM.yyyy', timeFormat: 'HH:mm' },
    );
    // The defaults are the ones the mail was written with: English.
    const mail = await smtp.waitFor('jon@example.test');
    assert.doesNotMatch(mail.raw, /Bitte|Veuillez/);
  });

  it('spec Sharing: POST /share `type` is the document type: another type is 400 naming both; the right one or none is accepted', async () => {
    const id = await newDoc('Typed');
    const refused = await share(id, [{ sharePurpose: 'view', shareTo: 'jon' }], { type: 'invoice' });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(
      refused.body.message,
      'Request validation errors: BODY ERRORS: "type" must be the type of the document "id" names: "invoice" was sent, the document is of type "d_default"',
    );
    const folderType = await share(id, [{ sharePurpose: 'view', shareTo: 'jon' }], { objectType: 'folder' });
    assert.equal(folderType.status, 400, folderType.text);
    assert.match(folderType.body.message, /"objectType" is "folder", but "id" names a document/);
    const accepted = await share(id, [{ sharePurpose: 'view', shareTo: 'jon' }], {
      type: 'd_default',
      objectType: 'document',
    });
    assert.equal(accepted.status, 200, accepted.text);
    assert.equal(accepted.body[0].sharedObjectEsType, 'd_default');
  });

  it('rules 1 and 2: a recipient appears once; signatureFields users must be recipients; at least one recipient', async () => {
    const id = await newDoc();
    const twice = await share(id, [
      { sharePurpose: 'sign', shareTo: 'ivy' },
      { sharePurpose: 'sign', shareTo: 'IVY' },
    ]);
    assert.equal(twice.status, 400);
    assert.equal(
      twice.body.message,
      'Request validation errors: BODY ERRORS: "data[1].shareTo" contains a duplicate value',
    );
    const stranger = await share(id, [{ sharePurpose: 'sign', shareTo: 'ivy' }], {
      signatureFields: [
        {
          type: 'signature',
          user: ['jon'],
          position: { percentX: 0.1, percentY: 0.1, percentWidth: 0.2, percentHeight: 0.05 },
        },
      ],
    });
    assert.equal(stranger.status, 400);
    assert.match(
      stranger.body.message,
      /"signatureFields\[0\]\.user\[0\]" must be one of the recipients in data/,
    );
    const none = await share(id, []);
    assert.equal(none.status, 400);
    const internalPassword = await share(id, [{ sharePurpose: 'view', shareTo: 'ivy', password: 'secret' }]);
    assert.equal(internalPassword.status, 400);
  });

  it('rule 3: oauthFactors default to email; email must match; other factors only with allowedOAuths = [uaePass]', async () => {
    const id = await newDoc();
    const mismatch = await share(id, [
      {
        sharePurpose: 'view',
        shareTo: 'a@example.org',
        oauthFactors: [{ type: 'email', value: 'b@example.org' }],
      },
    ]);
    assert.equal(mismatch.status, 400);
    assert.match(mismatch.body.message, /must match the recipient's e-mail/);
    const phoneOnly = await share(id, [
      {
        sharePurpose: 'view',
        shareTo: 'a@example.org',
        oauthFactors: [{ type: 'phoneNumber', value: '+971500000000' }],
      },
    ]);
    assert.equal(phoneOnly.status, 400);
    const mixed = await share(id, [
      {
        sharePurpose: 'view',
        shareTo: 'a@example.org',
        oauthFactors: [{ type: 'emiratesId', value: '784-1' }],
        allowedOAuths: ['uaePass', 'google'],
      },
    ]);
    assert.equal(mixed.status, 400);
    const national = await share(id, [
      {
        sharePurpose: 'view',
        shareTo: 'a@example.org',
        oauthFactors: [
          { type: 'emiratesId', value: '784-1' },
          { type: 'email', value: 'A@example.org' },
        ],
        allowedOAuths: ['uaePass'],
      },
    ]);
    assert.equal(national.status, 200, national.text);
    assert.deepEqual(national.body[0].oauthFactors, [
      { type: 'emiratesId', value: '784-1' },
      { type: 'email', value: 'a@example.org' },
    ]);
  });

  it('an external recipient unlocks a password-protected share, then reads the document; a wrong password fails', async () => {
    const id = await newDoc('Protected');
    await share(id, [{ sharePurpose: 'review', shareTo: 'pw@example.org', password: 'open-sesame' }]);
    const token = shareTokenOf(await smtp.waitFor('pw@example.org'));
    const locked = await server.api('GET', '/share/document', { token });
    assert.equal(locked.status, 403);
    assert.equal(locked.body.code, 'MFA_REQUIRED');
    const wrong = await server.api('POST', '/share/unlock', { token, body: { password: 'nope' } });
    assert.equal(wrong.status, 401);
    const right = await server.api('POST', '/share/unlock', { token, body: { password: 'open-sesame' } });
    assert.equal(right.body.status, 'SUCCESS');
    const session = right.body.token as string;
    const read = await server.api('GET', '/share/document', { token: session });
    assert.equal(read.status, 200);
    assert.equal(read.body.results[0].documentId, id);
    assert.equal((await server.api('GET', '/api/key', { token })).status, 401, 'a share link is no session');
    assert.equal(
      (await server.api('GET', '/api/key', { token: session })).status,
      401,
      'a recipient session is no user session',
    );
  });

  it('an external recipient unlocks with an SMS code and with an e-mail code', async () => {
    const id = await newDoc('Coded');
    await share(id, [{ sharePurpose: 'view', shareTo: 'sms@example.org', phone: '+15550001111' }]);
    const token = shareTokenOf(await smtp.waitFor('sms@example.org'));
    assert.equal((await server.api('POST', '/share/otp', { token, body: {} })).body.channel, 'sms');
    const code = await smsCodeTo(server, '+15550001111');
    assert.ok(code, 'the SMS was written');
    assert.equal(
      (
        await server.api('POST', '/share/unlock', {
          token,
          body: { otp: '000000' === code ? '111111' : '000000' },
        })
      ).status,
      401,
    );
    assert.equal((await server.api('POST', '/share/unlock', { token, body: { otp: code } })).status, 200);

    await server.api('POST', '/share/otp', { token, body: { channel: 'email' } });
    const mail = await smtp.waitFor('sms@example.org', /Code: \d{6}|Code:/);
    assert.match(mail.raw, /\d{6}/);
  });

  it('emailCode: the link stays locked until the one-time code sent by e-mail is given; a wrong or missing code is refused', async () => {
    const id = await newDoc('Mailed code');
    const created = await share(id, [
      { sharePurpose: 'view', shareTo: 'mailcode@example.org', emailCode: true },
    ]);
    assert.equal(created.status, 200, created.text);
    assert.equal(created.body[0].otpEnabled, true);
    const token = shareTokenOf(await smtp.waitFor('mailcode@example.org'));
    const locked = await server.api('GET', '/share/document', { token });
    assert.equal(locked.status, 403);
    assert.equal(locked.body.code, 'MFA_REQUIRED');
    assert.equal((await server.api('POST', '/share/unlock', { token, body: {} })).status, 400);
    const sent = await server.api('POST', '/share/otp', { token, body: {} });
    assert.equal(sent.body.channel, 'email');
    const mail = await smtp.waitFor('mailcode@example.org', /Code: \d{6}/);
    const code = /Code: (\d{6})/.exec(decode(mail.raw))![1]!;
    const wrong = code === '000000' ? '111111' : '000000';
    assert.equal((await server.api('POST', '/share/unlock', { token, body: { otp: wrong } })).status, 401);
    const unlocked = await server.api('POST', '/share/unlock', { token, body: { otp: code } });
    assert.equal(unlocked.status, 200);
    const opened = await server.api('GET', '/share/document', { token: unlocked.body.token });
    assert.equal(opened.status, 200);
    // The recipient's own share comes with the document: what a signing page needs to offer.
    assert.equal(opened.body.results[0].share.shareId, created.body[0].shareId);
    assert.equal(opened.body.results[0].share.shareType, 'view');
    assert.equal(opened.body.results[0].share.otpEnabled, true);
    const internal = await share(id, [{ sharePurpose: 'view', shareTo: 'ivy', emailCode: true }]);
    assert.equal(internal.status, 400);
    assert.match(internal.body.message, /"data\[0\]\.emailCode" are for external recipients only/);
  });

  it('sequential simple actions: each recipient in turn; waitingFor follows; documentSimpleActionExecuted is recorded', async () => {
    const id = await newDoc('Sequence');
    await share(
      id,
      [
        { sharePurpose: 'approve', shareTo: 'jon', order: 2 },
        { sharePurpose: 'review', shareTo: 'ivy', order: 1 },
      ],
      { sequential: true },
    );
    assert.deepEqual((await doc(id)).waitingFor, ['ivy', 'jon']);
    const jon = await server.login('jon', USER_PASSWORD);
    const early = await server.api('POST', '/share/execute', { token: jon, body: { id } });
    assert.equal(early.status, 409, 'not jon’s turn yet');
    const ivy = await server.login('ivy', USER_PASSWORD);
    const inbox = await server.api('GET', '/inbox', { token: ivy });
    const pending = inbox.body.results.find((s: { sharedObjectEsId: string }) => s.sharedObjectEsId === id);
    assert.equal(
      (
        await server.api('POST', '/inbox/action', {
          token: ivy,
          body: { shareId: pending.shareId, action: 'review' },
        })
      ).status,
      200,
    );
    assert.deepEqual((await doc(id)).waitingFor, ['jon']);
    assert.equal(
      (await server.api('POST', '/share/execute', { token: jon, body: { id, action: 'approve' } })).status,
      200,
    );
    assert.deepEqual((await doc(id)).waitingFor, []);
    const events = await eventsOf(server, id);
    assert.equal(events.filter((e) => e === 'documentSimpleActionExecuted').length, 2);
  });

  it('reject, cancel and expiry each reach their state', async () => {
    const rejected = await newDoc('To reject');
    await share(rejected, [
      { sharePurpose: 'sign', shareTo: 'ivy' },
      { sharePurpose: 'sign', shareTo: 'jon' },
    ]);
    assert.equal((await doc(rejected)).workflow.shareStateName, 'inprogress');
    const ivy = await server.login('ivy', USER_PASSWORD);
    const no = await server.api('PUT', '/share/reject', {
      token: ivy,
      body: { id: rejected, reason: 'wrong amount' },
    });
    assert.equal(no.status, 200, no.text);
    assert.equal((await doc(rejected)).workflow.shareStateName, 'rejected');
    assert.deepEqual((await doc(rejected)).waitingFor, []);
    await smtp.waitFor('owner@example.test', /wrong amount/);

    const cancelled = await newDoc('To cancel');
    await share(cancelled, [{ sharePurpose: 'sign', shareTo: 'ext@example.org' }]);
    const token = shareTokenOf(await smtp.waitFor('ext@example.org', /To cancel/));
    const ivyCancel = await server.api('POST', '/share/cancel', { token: ivy, body: { id: cancelled } });
    assert.equal(ivyCancel.status, 404, 'not theirs to see');
    assert.equal(
      (await server.api('POST', '/share/cancel', { token: owner, body: { id: cancelled } })).status,
      200,
    );
    assert.equal((await doc(cancelled)).workflow.shareStateName, 'cancelled');
    // Issue 37 item 9: the link of a cancelled share has no power left.
    const late = await server.api('PUT', '/share/reject', { token, body: { id: cancelled } });
    assert.equal(late.status, 401);
    assert.equal(late.body.code, 'UNAUTHENTICATED');

    const expiring = await newDoc('To expire');
    await share(expiring, [
      {
        sharePurpose: 'sign',
        shareTo: 'jon',
        validUntil: new Date(clock.now().getTime() + 3_600_000).toISOString(),
      },
    ]);
    clock.advance(2 * 3_600_000);
    let state: string | undefined;
    for (let i = 0; i < 100 && state !== 'expired'; i++) {
      state = (await doc(expiring)).workflow.shareStateName;
      if (state !== 'expired') await sleep(100);
    }
    assert.equal(state, 'expired', 'the scheduler expired it under the moved clock');
  });

  it('reminders: owner only (403), strangers 404, pending sign/approve/review only, one per day per share (429 REMINDER_TOO_SOON), SMS needs the add-on', async () => {
    const id = await newDoc('Remind me');
    const shares = (
      await share(id, [
        { sharePurpose: 'sign', shareTo: 'rem@example.org' },
        { sharePurpose: 'view', shareTo: 'jon' },
      ])
    ).body;
    const ivy = await server.login('ivy', USER_PASSWORD);
    assert.equal(
      (await server.api('POST', '/share/reminder', { token: ivy, body: { documentId: id } })).status,
      404,
    );
    await server.api('POST', '/share', {
      token: owner,
      body: { id, data: [{ sharePurpose: 'view', shareTo: 'ivy' }] },
    });
    assert.equal(
      (await server.api('POST', '/share/reminder', { token: ivy, body: { documentId: id } })).status,
      403,
    );
    const first = await server.api('POST', '/share/reminder', { token: owner, body: { documentId: id } });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.reminded, 1, 'the view share is not reminded');
    const second = await server.api('POST', '/share/reminder', {
      token: owner,
      body: { shares: [{ shareId: shares[0].shareId }] },
    });
    assert.equal(second.status, 429);
    assert.equal(second.body.code, 'REMINDER_TOO_SOON');
    assert.ok(Number(second.headers.get('retry-after')) > 80_000);
    const viewShare = await server.api('POST', '/share/reminder', {
      token: owner,
      body: { shares: [{ shareId: shares[1].shareId }] },
    });
    assert.equal(viewShare.status, 400);
    const sms = await server.api('POST', '/share/reminder', {
      token: owner,
      body: { reminderType: 'sms', shares: [{ shareId: shares[0].shareId, phone: '+15550002222' }] },
    });
    assert.equal(sms.status, 403);
    const query = await server.api('POST', '/share/reminder', {
      token: owner,
      query: { documentId: id },
      body: {},
    });
    assert.equal(query.status, 400, 'parameters in the body only');
    clock.advance(86_400_000 + 1000);
    assert.equal(
      (
        await server.api('POST', '/share/reminder', {
          token: owner,
          body: { shares: [{ shareId: shares[0].shareId }] },
        })
      ).status,
      200,
    );
  });

  it('mail links open a page that works for their reader (issue 25, 4): internal recipients and their reminders get PUBLIC_URL/sign/<id>', async () => {
    const id = await newDoc('Linked memo');
    assert.equal((await share(id, [{ sharePurpose: 'sign', shareTo: 'jon' }])).status, 200);
    const invitation = decode((await smtp.waitFor('jon@example.test', /Linked memo/)).raw);
    assert.ok(invitation.includes(`https://sign.example.test/sign/${id}`), invitation);
    assert.ok(!invitation.includes('/documents/'), 'no API address that answers 401 in a browser');
    smtp.messages.splice(0);
    const reminded = await server.api('POST', '/share/reminder', { token: owner, body: { documentId: id } });
    assert.equal(reminded.status, 200, reminded.text);
    const reminder = decode((await smtp.waitFor('jon@example.test', /Linked memo/)).raw);
    assert.ok(reminder.includes(`https://sign.example.test/sign/${id}`), reminder);
  });

  it('automatic reminders are sent by the scheduler from start every intervalDays and stop when the recipient acts', async () => {
    const id = await newDoc('Auto');
    const start = new Date(clock.now().getTime() + 60_000).toISOString();
    await share(id, [
      { sharePurpose: 'review', shareTo: 'auto@example.org', automaticReminder: { start, intervalDays: 1 } },
    ]);
    await smtp.waitFor('auto@example.org');
    const mails = () => smtp.messages.filter((m) => m.to.includes('auto@example.org'));
    const count = () => mails().length;
    assert.equal(count(), 1);
    clock.advance(2 * 60_000);
    for (let i = 0; i < 100 && count() < 2; i++) await sleep(100);
    assert.equal(count(), 2, 'the first automatic reminder');
    clock.advance(86_400_000);
    for (let i = 0; i < 100 && count() < 3; i++) await sleep(100);
    assert.equal(count(), 3, 'the next one a day later');
    // Each reminder carries a new link (issue 25); the earlier ones keep working (issue 37 item 9).
    const token = shareTokenOf(mails().at(-1) as ReceivedMail);
    assert.equal((await server.api('POST', '/share/execute', { token, body: { id } })).status, 200);
    clock.advance(2 * 86_400_000);
    await sleep(1500);
    assert.equal(count(), 3, 'no reminder after the action');
  });

  it('PUT /share edits pending shares; PUT /share/delegate hands a share on (signDelegated)', async () => {
    const { id, created } = await aDelegableShare('Delegable', 'del@example.org');
    const edited = await editShares([
      { shareId: created.shareId, message: 'Updated note', rights: ['delegate', 'print'] },
    ]);
    assert.equal(edited.status, 200, edited.text);
    assert.equal(edited.body[0].privateMessage, 'Updated note');
    const badFactor = await editShares([
      { shareId: created.shareId, oauthFactors: [{ type: 'email', value: 'x@example.org' }] },
    ]);
    assert.equal(badFactor.status, 400);
    const token = shareTokenOf(await smtp.waitFor('del@example.org'));
    const delegated = await server.api('PUT', '/share/delegate', {
      token,
      body: { shareTo: 'deputy@example.org' },
    });
    assert.equal(delegated.status, 200, delegated.text);
    assert.equal(delegated.body.isDelegated, true);
    assert.deepEqual(delegated.body.oauthFactors, [{ type: 'email', value: 'deputy@example.org' }]);
    assert.deepEqual((await doc(id)).waitingFor, ['deputy@example.org']);
    assert.equal(
      (await server.api('PUT', '/share/reject', { token, body: { id } })).status,
      401,
      'the old share is delegated: its link has no power left (issue 37 item 9)',
    );
    await smtp.waitFor('deputy@example.org');
    const events = await eventsOf(server, id);
    assert.ok(events.some((e) => e === 'signDelegated'));
  });

  it('rule 3: "PUT /share and PUT /share/delegate follow the same rules": a refused factor is named by its real field path', async () => {
    const { created } = await aDelegableShare('Delegable with factors', 'fac@example.org');
    const edit = await editShares([
      { shareId: created.shareId, oauthFactors: [{ type: 'email', value: 'x@example.org' }] },
    ]);
    assert.equal(edit.status, 400);
    assert.match(edit.body.message, /BODY ERRORS: "data\[0\]\.oauthFactors\[0\]\.value" must match/);
    const token = shareTokenOf(await smtp.waitFor('fac@example.org'));
    const delegate = await server.api('PUT', '/share/delegate', {
      token,
      body: {
        shareTo: 'deputy2@example.org',
        oauthFactors: [{ type: 'phoneNumber', value: '+971500000000' }],
      },
    });
    assert.equal(delegate.status, 400, delegate.text);
    assert.equal(
      delegate.body.message,
      'Request validation errors: BODY ERRORS: "oauthFactors[0].type" phoneNumber is allowed only when allowedOAuths holds only uaePass',
    );
  });

  it('PUT /share/{shareId}/recipient is removed: 404', async () => {
    assert.equal((await server.api('PUT', '/share/abc/recipient', { token: owner, body: {} })).status, 404);
  });
});

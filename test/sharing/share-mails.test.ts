import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { MAIL_ATTACHMENT_MAX_BYTES } from '../../src/core/sharing/completion.js';
import { writeBigPdf } from '../fixtures/big-pdf.js';
import { useTestTsa } from '../fixtures/tsa-server.js';
import { assertSignaturesValid, useWorkspace } from '../pdf/oracles.js';
import { aDocument, mainFileOf, readDocument, signDocument } from '../helpers/documents.js';
import { aUser, IVY, OWNER } from '../helpers/people.js';
import { USER_PASSWORD } from '../helpers/server.js';
import { linkOf, shareDocument, signByLink, smsTextTo } from '../helpers/sharing.js';
import { mimeOf, shareTokenOf, type ReceivedMail } from '../helpers/smtp.js';
import { useServer } from '../helpers/use-server.js';
import { readJson } from '../../src/store/db/json.js';

const at = (x: number) => [
  { type: 'signature', position: { percentX: x, percentY: 0.85, percentWidth: 0.2, percentHeight: 0.06 } },
];

/** What a mail client shows of a message: who it is from, its subject, its text and HTML, its files. */
function shown(mail: ReceivedMail) {
  const { headers, parts } = mimeOf(mail);
  const part = (type: RegExp) => parts.find((p) => type.test(p.headers['content-type'] ?? ''));
  return {
    from: headers.from ?? '',
    replyTo: headers['reply-to'] ?? '',
    subject: headers.subject ?? '',
    text: part(/^text\/plain/)?.body.toString('utf8') ?? '',
    html: part(/^text\/html/)?.body.toString('utf8') ?? '',
    pdf: part(/^application\/pdf/),
  };
}

/**
 * Issue 25, mails: each says what is asked of its reader, by whom and until when, in the share's
 * language, as a plain-text and an HTML part with one button that works for that person; when the
 * document completes, every signer receives the signed PDF, not only the owner.
 */
describe('the mails signers receive name the document, the sender and what to do', () => {
  const server = useServer({ smtp: true, env: { PUBLIC_URL: 'https://sign.example.test' } });
  const smtp = server.smtp;
  const space = useWorkspace();
  let owner: string;
  before(async () => {
    owner = (await aUser(server, OWNER)).token;
    await aUser(server, IVY);
  });

  it('an invitation names the action in its subject, comes from the sharer (Reply-To them), shows the deadline in the share’s language, and has matching text and HTML parts', async () => {
    const id = await aDocument(server, owner, { title: 'Lease 2027', pdf: { pages: 1 } });
    const validUntil = '2031-03-05T17:30:00.000Z';
    await shareDocument(server, owner, id, {
      to: [
        { sharePurpose: 'sign', shareTo: 'kai@example.org', language: 'de', validUntil },
        { sharePurpose: 'approve', shareTo: 'ann@example.org' },
        { sharePurpose: 'view', shareTo: 'vic@example.org', language: 'fr' },
      ],
    });
    const kai = shown(await smtp.waitFor('kai@example.org', /Lease 2027/));
    assert.equal(kai.subject, 'Bitte „Lease 2027“ unterschreiben');
    assert.match(kai.from, /^"?Olivia Owner via Signery"? <no-reply@localhost>$/);
    assert.equal(kai.replyTo, OWNER.email);
    for (const body of [kai.text, kai.html]) {
      assert.match(body, /Olivia Owner bittet Sie, das Dokument „Lease 2027“ zu unterschreiben/);
      assert.match(body, /5\. März 2031 um 17:30 UTC/, 'the deadline, as German readers write it');
      assert.match(body, /Prüfen und unterschreiben/, 'the button says what it leads to');
      assert.match(body, /https:\/\/sign\.example\.test\/s\/shr_/);
    }
    assert.match(kai.html, /<html lang="de">/);

    const ann = shown(await smtp.waitFor('ann@example.org', /Lease 2027/));
    assert.equal(ann.subject, 'Please approve “Lease 2027”');
    assert.doesNotMatch(ann.text, /respond by/, 'no deadline was set');
    const vic = shown(await smtp.waitFor('vic@example.org', /Lease 2027/));
    assert.equal(vic.subject, '« Lease 2027 » a été partagé avec vous');
  });

  it('a reminder to an external recipient carries a link that opens the share; the invitation’s link keeps working (issue 37 item 9: every link a recipient received stays valid while the share is active)', async () => {
    const id = await aDocument(server, owner, { title: 'Reminded deed', pdf: { pages: 1 } });
    await shareDocument(server, owner, id, { to: 'rem@example.org' });
    const first = await linkOf(smtp, 'rem@example.org', /Reminded deed/);
    const reminded = await server.api('POST', '/share/reminder', { token: owner, body: { documentId: id } });
    assert.equal(reminded.status, 200, JSON.stringify(reminded.body));
    const reminder = await smtp.waitFor('rem@example.org', /Reminder: please sign/);
    const mail = shown(reminder);
    assert.doesNotMatch(mail.text, /replaces/, 'no link is replaced');
    assert.match(mail.from, /Olivia Owner via Signery/);
    const fresh = shareTokenOf(reminder);
    assert.notEqual(fresh, first);
    assert.equal((await server.api('GET', '/share/document', { token: fresh })).status, 200);
    assert.equal((await server.api('GET', '/share/document', { token: first })).status, 200);
  });

  it('a reminder by SMS, in the share’s language, carries a link that opens the share, like the mail; earlier links keep working', async () => {
    const admin = (await aUser(server, { name: 'gina', role: 'globalAdmin' })).token;
    const enabled = await server.api('PUT', '/settings/properties', {
      token: admin,
      body: { smsAddOn: true },
    });
    assert.equal(enabled.status, 200, enabled.text);
    const id = await aDocument(server, owner, { title: 'Texted deed', pdf: { pages: 1 } });
    const [share] = await shareDocument(server, owner, id, {
      to: [{ sharePurpose: 'sign', shareTo: 'texted@example.org', language: 'de' }],
    });
    const first = await linkOf(smtp, 'texted@example.org', /Texted deed/);
    const phone = '+15550003333';
    const reminded = await server.api('POST', '/share/reminder', {
      token: owner,
      body: { reminderType: 'sms', shares: [{ shareId: share.shareId, phone }] },
    });
    assert.equal(reminded.status, 200, reminded.text);
    const text = (await smsTextTo(server, phone)) ?? 'no SMS';
    assert.match(text, /^Erinnerung: .*„Texted deed“.*unterschreiben/, text);
    const fresh = /https:\/\/sign\.example\.test\/s\/(shr_[\w-]+)/.exec(text)?.[1];
    assert.ok(fresh, text);
    assert.doesNotMatch(text, /ersetzt/, 'no link is replaced');
    assert.equal((await server.api('GET', '/share/document', { token: fresh })).status, 200);
    assert.equal((await server.api('GET', '/share/document', { token: first })).status, 200);
  });

  it('on completion every signer, external or user, and the owner receive the signed PDF, sealed: the very file of the document', async () => {
    const id = await aDocument(server, owner, { title: 'Shared contract', pdf: { pages: 1 } });
    await shareDocument(server, owner, id, {
      to: [
        { sharePurpose: 'sign', shareTo: 'ext@example.org', language: 'fr' },
        { sharePurpose: 'sign', shareTo: 'ivy' },
      ],
    });
    const link = await linkOf(smtp, 'ext@example.org', /Shared contract/);
    assert.equal((await signByLink(server, link, id, at(0.1))).status, 200);
    const ivy = await server.login('ivy', USER_PASSWORD);
    assert.equal((await signDocument(server, ivy, id, at(0.5), owner)).status, 200);
    assert.equal((await readDocument(server, owner, id)).workflow.shareStateName, 'completed');
    const final = await mainFileOf(server, owner, id);
    // A signer with an account finds it again among what they did (GET /inbox?state=done), complete.
    const done = await server.api('GET', '/inbox?state=done', { token: ivy });
    assert.deepEqual(
      (done.body.results as { sharedObjectEsId: string; documentShareState: string }[])
        .filter((share) => share.sharedObjectEsId === id)
        .map((share) => share.documentShareState),
      ['completed'],
    );
    assert.equal((await server.api('GET', '/inbox', { token: ivy })).body.total, 0, 'nothing pending');

    const completed = {
      ext: shown(await smtp.waitFor('ext@example.org', /est termin/, 20_000)),
      ivy: shown(await smtp.waitFor(IVY.email, /is complete/, 20_000)),
      owner: shown(await smtp.waitFor(OWNER.email, /is complete/, 20_000)),
    };
    for (const [who, mail] of Object.entries(completed)) {
      assert.ok(mail.pdf, `${who} gets the PDF`);
      assert.match(
        mail.pdf.headers['content-disposition'] ?? '',
        /attachment; filename="?Shared contract\.pdf/,
      );
      assert.ok(mail.pdf.body.equals(final), `${who}’s PDF is the sealed main file`);
    }
    assert.equal(completed.ext.subject, '« Shared contract » est terminé');
    assert.match(completed.ext.text, /Le PDF signé est joint/);
    assert.doesNotMatch(
      completed.ext.text,
      /https:/,
      'an external signer has the file, not a link to a page they cannot open',
    );
    assert.match(completed.ivy.text, new RegExp(`https://sign\\.example\\.test/sign/${id}`));
    assert.match(completed.owner.html, /The signed PDF is attached/);
    await assertSignaturesValid(
      await space.write(`${id}-mailed.pdf`, completed.ext.pdf?.body ?? Buffer.alloc(0)),
      3,
    );
  });
});

describe('the completion mails wait for the seal on completion, and go the moment it commits', () => {
  const tsa = useTestTsa();
  // A worker that looks for due jobs only when woken: what makes a job due must also wake it.
  const server = useServer(() => ({
    smtp: true,
    env: { TSA_URL: tsa.url },
    worker: { pollIntervalMs: 3_600_000 },
  }));
  const smtp = server.smtp;
  let owner: string;
  before(async () => {
    owner = (await aUser(server, OWNER)).token;
    await aUser(server, IVY);
  });

  /** The completion job of the document once the worker has tried it and it waits for its retry. */
  const waitingForRetry = async (documentId: string) => {
    for (let tries = 0; tries < 500; tries++) {
      const job = await server.app.deps.db
        .selectFrom('jobs')
        .select(['status', 'attempts'])
        .where('id', 'like', `document.completionMails:${documentId}:%`)
        .executeTakeFirst();
      if (job?.status === 'queued' && job.attempts > 0) return;
      await sleep(20);
    }
    throw new Error('the completion job was never tried while the seal was pending');
  };

  it('the seal made by the signing request, held at the TSA while the completion job found it pending, wakes that job when it commits', async () => {
    const id = await aDocument(server, owner, { title: 'Held seal', pdf: { pages: 1 } });
    await shareDocument(server, owner, id, { to: 'ivy' });
    const ivy = await server.login('ivy', USER_PASSWORD);
    const version = (await readDocument(server, owner, id))._version as number;
    tsa.hold();
    // The signature itself needs no TSA; the seal, at the default level (B-T), waits for it.
    const signing = server.api('PUT', `/documents/sign/${version}`, {
      token: ivy,
      body: { id, signatures: at(0.1), level: 'B-B' },
    });
    try {
      await tsa.held(1);
      await waitingForRetry(id);
    } finally {
      tsa.release();
    }
    const signed = await signing;
    assert.equal(signed.status, 200, signed.text);
    const mail = shown(await smtp.waitFor(OWNER.email, /is complete/));
    assert.ok(mail.pdf?.body.equals(await mainFileOf(server, owner, id)), 'the sealed file');
  });
});

describe('completion mails of an organisation that does not seal on completion (sealOnComplete false) go at once', () => {
  const server = useServer({ smtp: true, env: { PUBLIC_URL: 'https://sign.example.test' } });
  const smtp = server.smtp;
  const space = useWorkspace();
  let owner: string;
  let ivy: string;
  before(async () => {
    owner = (await aUser(server, OWNER)).token;
    await aUser(server, IVY);
    ivy = await server.login('ivy', USER_PASSWORD);
    const admin = await server.adminToken();
    const set = await server.api('PUT', '/settings/properties', {
      token: admin,
      body: { sealOnComplete: false },
    });
    assert.equal(set.status, 200, set.text);
  });

  /** A document of the owner’s shared with Ivy, whose signature (request `requestId`) completes it. */
  const signedByIvy = async (title: string, requestId: string, pdf?: Buffer) => {
    const id = await aDocument(server, owner, { title, pdf: pdf ?? { pages: 1 } });
    await shareDocument(server, owner, id, { to: 'ivy' });
    const version = (await readDocument(server, owner, id))._version as number;
    const signed = await server.api('PUT', `/documents/sign/${version}`, {
      token: ivy,
      body: { id, signatures: at(0.1) },
      headers: { 'x-request-id': requestId },
    });
    assert.equal(signed.status, 200, signed.text);
    assert.equal(signed.body.shareStateName, 'completed');
    return id;
  };
  /** The completion mail of the document titled `title` to `to`. */
  const completionMail = (to: string, title: string) =>
    smtp.waitFor(to, new RegExp(`${title}\\S* is complete`));

  it('the mails’ jobs carry the id of the request that completed the document (its log lines lead to them)', async () => {
    await signedByIvy('Traced completion', 'completes-traced-1');
    await completionMail(OWNER.email, 'Traced completion');
    await completionMail(IVY.email, 'Traced completion');
    const jobs = await server.app.deps.db
      .selectFrom('jobs')
      .select('payload')
      .where('type', '=', 'mail.send')
      .execute();
    // The message itself is sealed, then dropped once sent (secrets at rest); its request id stays.
    const completion = jobs
      .map((job) => readJson<{ requestId?: string }>(job.payload, {}))
      .filter((payload) => payload.requestId === 'completes-traced-1');
    assert.equal(completion.length, 2, 'the owner’s and the signer’s mail');
  });

  it('with no seal to wait for, the mails go out on the completion job’s first try, with the signed PDF as it is: the document’s file, signed once', async () => {
    const id = await signedByIvy('Unsealed lease', 'completes-unsealed-1');
    const owners = shown(await completionMail(OWNER.email, 'Unsealed lease'));
    const ivys = shown(await completionMail(IVY.email, 'Unsealed lease'));
    const file = await mainFileOf(server, owner, id);
    for (const [who, mail] of Object.entries({ owner: owners, ivy: ivys })) {
      assert.equal(mail.subject, '“Unsealed lease” is complete');
      assert.ok(mail.pdf?.body.equals(file), `${who}’s PDF is the main file`);
      assert.match(mail.text, /The signed PDF is attached/);
    }
    const report = await server.api('GET', `/documents/${id}/verify`, { token: owner });
    assert.equal(report.body.signatures.length, 1, 'Ivy’s signature, and no seal');
    const jobs = await server.app.deps.db
      .selectFrom('jobs')
      .select(['type', 'status', 'attempts'])
      .where('id', 'like', `%:${id}:%`)
      .execute();
    assert.deepEqual(jobs, [{ type: 'document.completionMails', status: 'done', attempts: 1 }]);
  });

  it(`a signed PDF over MAIL_ATTACHMENT_MAX_BYTES (${MAIL_ATTACHMENT_MAX_BYTES / 1024 / 1024} MiB) is not attached: the mail goes without it, says it is too large, and links to the document`, async () => {
    const path = join(space.dir, 'over-the-limit.pdf');
    writeBigPdf(path, MAIL_ATTACHMENT_MAX_BYTES + 512 * 1024, 1);
    const id = await signedByIvy('Large scan', 'completes-large-1', await readFile(path));
    const signed = await server.app.deps.db
      .selectFrom('files')
      .innerJoin('documents', 'documents.main_file_id', 'files.id')
      .select('files.size')
      .where('documents.id', '=', id)
      .executeTakeFirstOrThrow();
    assert.ok(signed.size > MAIL_ATTACHMENT_MAX_BYTES);
    for (const to of [OWNER.email, IVY.email]) {
      const mail = shown(await completionMail(to, 'Large scan'));
      assert.equal(mail.subject, '“Large scan” is complete');
      assert.equal(mail.pdf, undefined, `no file in ${to}’s mail`);
      for (const body of [mail.text, mail.html]) {
        assert.match(body, /The signed PDF is too large to attach to this message/);
        assert.match(body, new RegExp(`https://sign\\.example\\.test/sign/${id}`));
      }
    }
  });
});

import assert from 'node:assert/strict';
import { stat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readJson } from '../../src/store/db/json.js';
import { aUser, withMail } from '../helpers/people.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { aSharedDocument } from '../helpers/sharing.js';
import { decode, shareTokenOf, startSmtp, type TestSmtp } from '../helpers/smtp.js';
import { useServer } from '../helpers/use-server.js';
import { waitFor } from '../webhooks/helpers.js';

/**
 * DESIGN, Decided this round, secrets at rest: "link tokens, one-time codes and recipient sessions are
 * stored only hashed; a queued mail that must carry a link keeps it encrypted with a key derived from
 * SECRET_KEY (generated under DATA_DIR when unset) and drops it once sent" (issue 37, item 8: finished
 * mail.send jobs kept live links and `Code: 207841` in the database, and in every backup).
 */
describe('secrets at rest: a queued message keeps its link or code sealed, and nothing of it once sent', () => {
  // One node queues (no worker), so what waits in the database can be read; a second node over the
  // same store sends it, as a worker node of an installation does.
  const server = useServer({ worker: false });
  let sender: TestServer;
  let smtp: TestSmtp;
  before(async () => {
    smtp = await startSmtp();
    sender = await startServer({ sameStoreAs: server, env: { SMTP_URL: smtp.url } });
  });
  after(async () => {
    await sender?.close();
    await smtp?.close();
  });

  const sendingJobs = async () =>
    (
      await server.app.deps.db
        .selectFrom('jobs')
        .select(['id', 'type', 'payload', 'status'])
        .where('type', 'in', ['mail.send', 'sms.send'])
        .execute()
    ).map((job) => ({ ...job, text: JSON.stringify(job.payload) }));

  it('an invitation waits sealed (no link, no address, no title in clear) and is only {sent: true} once it went out; the link in the mail works', async () => {
    const owner = (await aUser(server, withMail('sealing-owner'))).token;
    const title = 'Sealed invitation';
    await aSharedDocument(server, owner, {
      title,
      to: [{ sharePurpose: 'sign', shareTo: 'sealed@example.org' }],
    });
    // The worker node has not started sending yet for every job: read what is waiting.
    const waiting = await sendingJobs();
    assert.ok(waiting.length >= 1);
    for (const job of waiting.filter((j) => j.status === 'queued')) {
      assert.doesNotMatch(job.text, /shr_|sealed@example\.org|Sealed invitation/, 'nothing readable');
      assert.match(job.text, /sealed:v1:/);
    }
    const mail = await smtp.waitFor('sealed@example.org', /\/s\/shr_/);
    const link = shareTokenOf(mail);
    await waitFor(
      async () => (await sendingJobs()).every((job) => job.status === 'done'),
      10_000,
      'jobs done',
    );
    for (const job of await sendingJobs()) {
      assert.doesNotMatch(job.text, /shr_|sealed@example\.org|Sealed invitation|Code:/);
      assert.deepEqual(
        Object.keys(readJson<Record<string, unknown>>(job.payload, {})).filter((k) => k !== 'requestId'),
        ['sent'],
      );
    }
    assert.equal((await server.api('GET', '/share/document', { token: link })).status, 200, 'the link works');
  });

  it('an e-mail code is never in the database in clear, queued or sent', async () => {
    const owner = (await aUser(server, withMail('code-owner'))).token;
    await aSharedDocument(server, owner, {
      title: 'Coded',
      to: [{ sharePurpose: 'sign', shareTo: 'coded@example.org', emailCode: true }],
    });
    const link = shareTokenOf(await smtp.waitFor('coded@example.org', /\/s\/shr_/));
    assert.equal((await server.api('POST', '/share/otp', { token: link, body: {} })).status, 200);
    const queued = await sendingJobs();
    const mail = await smtp.waitFor('coded@example.org', /Code: \d{6}/);
    const code = /Code: (\d{6})/.exec(decode(mail.raw))![1]!;
    for (const job of queued) assert.ok(!job.text.includes(code), 'the queued job does not hold the code');
    await waitFor(
      async () => (await sendingJobs()).every((job) => job.status === 'done'),
      10_000,
      'jobs done',
    );
    for (const job of await sendingJobs()) assert.ok(!job.text.includes(code), 'nor the sent one');
  });

  it('without SECRET_KEY the key is made once under DATA_DIR, readable by its owner only (the sending node, on the same DATA_DIR, opened what the queueing node sealed)', async () => {
    const file = join(server.dataDir, 'secret-key');
    const made = await stat(file);
    assert.equal(made.mode & 0o077, 0, 'no access for group or others');
    assert.ok((await readFile(file, 'utf8')).trim().length >= 43);
  });
});

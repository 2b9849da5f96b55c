import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { DEFAULT_CONSENT_STATEMENTS } from '../../src/core/sharing/consent-statement.js';
import { consentRecords } from '../helpers/audit-log.js';
import { readDocument } from '../helpers/documents.js';
import { aUser, IVY, OWNER, someUsers } from '../helpers/people.js';
import type { ApiResponse } from '../helpers/server.js';
import { aSharedDocument, anExternalShare, signByLink, smsTextTo } from '../helpers/sharing.js';
import { decode } from '../helpers/smtp.js';
import { useServer } from '../helpers/use-server.js';
import { tool, useWorkspace } from '../pdf/oracles.js';

const at = (x: number) => [
  { type: 'signature', position: { percentX: x, percentY: 0.85, percentWidth: 0.2, percentHeight: 0.06 } },
];
/**
 * The audit trail's JSON among a PDF's objects, as `qpdf --json=2 --json-stream-data=inline` lists them:
 * the embedded file stream (`/Type /EmbeddedFile`, `/Subtype /application#2fjson`) that parses as a trail.
 */
function embeddedJson(qpdfJson: string): unknown {
  const objects = (JSON.parse(qpdfJson) as { qpdf: [unknown, Record<string, unknown>] }).qpdf[1];
  for (const value of Object.values(objects)) {
    const stream = (value as { stream?: { dict: Record<string, unknown>; data?: string } }).stream;
    if (!stream?.data || stream.dict['/Type'] !== '/EmbeddedFile') continue;
    const text = Buffer.from(stream.data, 'base64').toString('utf8');
    if (text.includes('signery-audit-trail/1')) return JSON.parse(text) as unknown;
  }
  assert.fail('no embedded audit trail in the PDF');
}
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * Issue 40, Deliver 2 (DESIGN "Decided this round"): "Before the final sign action the signer page shows
 * every visual that signing will stamp, and the signer accepts an electronic-signature consent
 * statement; the acceptance is an audit record with activity `consentAccepted` (time, address, the
 * statement's SHA-256)."
 */
describe('the electronic-signature consent: GET /share/document `consent`, POST /share/consent', () => {
  const server = useServer({ smtp: true });
  const space = useWorkspace();
  let owner: string;
  before(async () => {
    owner = (await aUser(server, OWNER)).token;
    await someUsers(server, [IVY]);
  });
  let n = 0;
  const aShare = (recipient: Record<string, unknown> = {}) => {
    n += 1;
    return anExternalShare(server, owner, {
      title: `Consent ${n}`,
      email: `c${n}@example.org`,
      recipient,
      mail: new RegExp(`Consent ${n}\\b`),
    });
  };
  const consentOf = async (token: string) => {
    const read = await server.api('GET', '/share/document', { token });
    assert.equal(read.status, 200, read.text);
    return read.body.results[0].consent as { text: string; language: string; sha256: string };
  };
  const accept = (token: string, body: Record<string, unknown>): Promise<ApiResponse> =>
    server.api('POST', '/share/consent', { token, body });
  const setStatements = async (statements: Record<string, string | null>) => {
    const set = await server.api('PUT', '/settings/properties', {
      token: await server.adminToken(),
      body: { consentStatements: statements },
    });
    assert.equal(set.status, 200, set.text);
  };

  it('the statement is the built-in one in the share’s language, with the SHA-256 of its UTF-8 text', async () => {
    const english = await consentOf((await aShare()).link);
    assert.equal(english.language, 'en');
    assert.equal(english.text, DEFAULT_CONSENT_STATEMENTS.en);
    assert.match(english.text, /^I agree to sign this document electronically\./);
    assert.equal(english.sha256, sha256(english.text));
    const german = await consentOf((await aShare({ language: 'de' })).link);
    assert.equal(german.language, 'de');
    assert.equal(german.text, DEFAULT_CONSENT_STATEMENTS.de);
    assert.equal(german.sha256, sha256(german.text));
    const unknown = await consentOf((await aShare({ language: 'it' })).link);
    assert.equal(unknown.language, 'en', 'a language without a statement reads English');
  });

  it('accepting records consentAccepted on the document (time, address, statementSha256, language); a wrong hash is 409 CONSENT_CHANGED and records nothing', async () => {
    const { id, link } = await aShare();
    const consent = await consentOf(link);
    const wrong = await accept(link, { sha256: sha256('some other words') });
    assert.equal(wrong.status, 409, wrong.text);
    assert.equal(wrong.body.code, 'CONSENT_CHANGED');
    assert.match(wrong.body.message, /changed/);
    assert.deepEqual(await consentRecords(server, id), []);
    const bad = await accept(link, { sha256: 'not-a-hash' });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.code, 'VALIDATION_ERROR');

    const accepted = await accept(link, { sha256: consent.sha256 });
    assert.equal(accepted.status, 200, accepted.text);
    assert.equal(accepted.body.accepted, true);
    assert.ok(!Number.isNaN(Date.parse(accepted.body.acceptedAt)));
    const [entry, ...more] = await consentRecords(server, id);
    assert.equal(more.length, 0);
    assert.ok(entry);
    assert.equal(entry.actorId, `c${n}@example.org`);
    assert.equal(entry.time, accepted.body.acceptedAt);
    assert.equal(entry.data.statementSha256, consent.sha256);
    assert.equal(entry.data.language, 'en');
    assert.match(String(entry.data.address), /^(::ffff:)?127\.0\.0\.1$|^::1$/);
    // The API does not make consent a condition of signing (integrators record it their way).
    const without = await aShare();
    assert.equal((await signByLink(server, without.link, without.id, at(0.1))).status, 200);
  });

  it('the tenant’s statement per language (consentStatements): its text and hash; an old hash is 409 once it is reworded', async () => {
    const { link: english } = await aShare();
    const { link: german } = await aShare({ language: 'de' });
    const before = await consentOf(german);
    await setStatements({ de: 'Ich unterschreibe elektronisch und bin daran gebunden.' });
    try {
      const now = await consentOf(german);
      assert.equal(now.text, 'Ich unterschreibe elektronisch und bin daran gebunden.');
      assert.equal(now.sha256, sha256(now.text));
      assert.equal(
        (await consentOf(english)).text,
        DEFAULT_CONSENT_STATEMENTS.en,
        'other languages keep theirs',
      );
      const stale = await accept(german, { sha256: before.sha256 });
      assert.equal(stale.status, 409, stale.text);
      assert.equal(stale.body.code, 'CONSENT_CHANGED');
      assert.equal((await accept(german, { sha256: now.sha256 })).status, 200);
      const tooLong = await server.api('PUT', '/settings/properties', {
        token: await server.adminToken(),
        body: { consentStatements: { en: 'x'.repeat(4001) } },
      });
      assert.equal(tooLong.status, 400, tooLong.text);
    } finally {
      await setStatements({});
    }
  });

  it('a share that ended is 401; once its recipient signed, 403 (the link only downloads)', async () => {
    const { id, link } = await aShare();
    const { sha256: hash } = await consentOf(link);
    assert.equal((await server.api('POST', '/share/cancel', { token: owner, body: { id } })).status, 200);
    const ended = await accept(link, { sha256: hash });
    assert.equal(ended.status, 401, ended.text);
    assert.equal(ended.body.code, 'UNAUTHENTICATED');

    const signed = await aShare();
    assert.equal((await signByLink(server, signed.link, signed.id, at(0.1))).status, 200);
    const after = await accept(signed.link, { sha256: hash });
    assert.equal(after.status, 403, after.text);
  });

  it('an internal recipient consents for their share by naming the document', async () => {
    const { id } = await aSharedDocument(server, owner, { title: 'Internal consent', to: 'ivy' });
    const ivy = await server.login('ivy', 'user-password-1');
    const read = await server.api('GET', '/share/document', { token: ivy, query: { id } });
    assert.equal(read.status, 200, read.text);
    const consent = read.body.results[0].consent;
    assert.equal(consent.text, DEFAULT_CONSENT_STATEMENTS.en);
    const accepted = await accept(ivy, { id, sha256: consent.sha256 });
    assert.equal(accepted.status, 200, accepted.text);
    const [entry] = await consentRecords(server, id);
    assert.equal(entry?.actorId, 'ivy');
    assert.equal((await accept(ivy, { sha256: consent.sha256 })).status, 404, 'without the document: none');
  });

  it('the consent travels in the audit trail the completed PDF embeds (found by qpdf --json among its objects)', async () => {
    const { id, link } = await aShare();
    const consent = await consentOf(link);
    assert.equal((await accept(link, { sha256: consent.sha256 })).status, 200);
    assert.equal((await signByLink(server, link, id, at(0.1))).status, 200);
    const doc = await readDocument(server, owner, id);
    assert.equal(doc.workflow.shareStateName, 'completed');
    // The seal on completion carries the trail on its own appearance (/AP /N /AF, ISO 32000-2
    // 14.13), where no attachment list looks: qpdf's JSON of every object, streams decoded, finds it.
    const copy = await fetch(`${server.url}/api/v1/share/signed`, {
      headers: { authorization: `Bearer ${link}` },
    });
    assert.equal(copy.status, 200);
    const path = await space.write('consent.pdf', Buffer.from(await copy.arrayBuffer()));
    const trail = embeddedJson(
      await tool('qpdf', ['--json=2', '--json-stream-data=inline', '--decode-level=generalized', path]),
    ) as { events: { activityType: string; actorId: string; data: Record<string, unknown> }[] };
    const event = trail.events.find((e) => e.activityType === 'consentAccepted');
    assert.ok(event, 'the embedded trail has the consent');
    assert.equal(event.data.statementSha256, consent.sha256);
    assert.equal(event.actorId, `c${n}@example.org`);
    const order = trail.events.map((e) => e.activityType);
    assert.ok(order.indexOf('consentAccepted') < order.indexOf('documentSigned'), order.join(', '));
  });
});

/**
 * Issue 40, reproduction 1 and Deliver 1 (DESIGN: "After a recipient completes, their link (or their
 * recipient session) may download the documents they signed for RECIPIENT_DOWNLOAD_DAYS"): a
 * protected share's recipient unlocks again, after signing, and the session downloads what they signed.
 */
describe('a protected share’s recipient unlocks again after signing, to download what they signed', () => {
  const server = useServer({ smtp: true, env: { RECIPIENT_DOWNLOAD_DAYS: '3' } });
  let owner: string;
  before(async () => {
    owner = (await aUser(server, OWNER)).token;
  });
  const unlock = (token: string, body: Record<string, unknown>) =>
    server.api('POST', '/share/unlock', { token, body });

  async function signWithSession(link: string, id: string, secret: () => Promise<Record<string, unknown>>) {
    const session = await unlock(link, await secret());
    assert.equal(session.status, 200, session.text);
    assert.equal((await signByLink(server, session.body.token, id, at(0.1))).status, 200);
    return session.body.token as string;
  }

  /** Codes already used: each unlock asks for a new one. */
  const used = new Set<string>();
  const freshCode = (text: string | undefined) => {
    const code = /(\d{6})/.exec(text ?? '')?.[1];
    assert.ok(code, 'a code was sent');
    used.add(code);
    return { otp: code };
  };
  const askCode = async (link: string) => {
    const sent = await server.api('POST', '/share/otp', { token: link, body: {} });
    assert.equal(sent.status, 200, sent.text);
  };
  const secrets: [
    string,
    Record<string, unknown>,
    (link: string, email: string) => Promise<Record<string, unknown>>,
  ][] = [
    ['a password', { password: 'open sesame' }, async () => ({ password: 'open sesame' })],
    [
      'an SMS code',
      { phone: '+15550001111' },
      async (link) => {
        await askCode(link);
        return freshCode(
          await smsTextTo(
            server,
            '+15550001111',
            (text) => /\d{6}/.test(text) && !used.has(/(\d{6})/.exec(text)![1]!),
          ),
        );
      },
    ],
    [
      'an e-mail code',
      { emailCode: true },
      async (link, email) => {
        await askCode(link);
        for (let i = 0; i < 100; i++) {
          const fresh = server.smtp.messages
            .filter((m) => m.to.includes(email))
            .map((m) => /<strong>(\d{6})<\/strong>/.exec(decode(m.raw))?.[1])
            .find((code) => code !== undefined && !used.has(code));
          if (fresh) return freshCode(fresh);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        return assert.fail('no new code by e-mail');
      },
    ],
  ];
  for (const [kind, recipient, secret] of secrets) {
    it(`${kind}: the link alone downloads nothing; unlocking again answers a download-only session`, async () => {
      const email = `${kind.toLowerCase().replace(/\W+/g, '-')}@example.org`;
      const { id, link } = await anExternalShare(server, owner, {
        title: `Keep ${kind}`,
        email,
        recipient,
      });
      await signWithSession(link, id, () => secret(link, email));
      assert.equal((await server.api('GET', '/share/signed', { token: link })).status, 403, 'the link alone');
      const again = await unlock(link, await secret(link, email));
      assert.equal(again.status, 200, again.text);
      const copy = await server.api('GET', '/share/signed', { token: again.body.token });
      assert.equal(copy.status, 200, copy.text);
      assert.match(copy.text, /^%PDF-/);
      const read = await server.api('GET', '/share/document', { token: again.body.token });
      assert.equal(read.status, 403, 'the session only downloads');
      assert.equal(read.body.code, 'FORBIDDEN');
    });
  }
});

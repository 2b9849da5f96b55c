import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { before, describe, it } from 'node:test';
import { aUser, withMail } from '../helpers/people.js';
import { anExternalShare } from '../helpers/sharing.js';
import { useServer, useStarted } from '../helpers/use-server.js';

interface ReceivedSms {
  authorization: string | undefined;
  contentType: string | undefined;
  body: { to: string; text: string };
}

/** A provider's HTTP API on loopback, as SMS_HTTP_URL points at one: keeps what it is sent. */
async function startSmsGateway(): Promise<{
  url: string;
  received: ReceivedSms[];
  close: () => Promise<void>;
}> {
  const received: ReceivedSms[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/messages') {
        res.writeHead(404).end();
        return;
      }
      received.push({
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedSms['body'],
      });
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"queued":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/messages`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('notify/sms/http.ts: SMS one-time codes through a real HTTP SMS provider (SMS_HTTP_URL, SMS_HTTP_TOKEN)', () => {
  const gateway = useStarted('the SMS gateway', startSmsGateway, (started) => started.close());
  const server = useServer(() => ({
    smtp: true,
    env: { SMS_HTTP_URL: gateway.url, SMS_HTTP_TOKEN: 'gateway-token-123' },
  }));
  let owner: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
  });

  it('a share with `phone`: POST /share/otp sends the code to the provider with the bearer token, and the code unlocks the link', async () => {
    const {
      id,
      shares,
      link: token,
    } = await anExternalShare(server, owner, {
      title: 'Coded by SMS',
      pdf: null,
      email: 'mobile@example.org',
      recipient: { sharePurpose: 'review', phone: '+41 79 555 12 34' },
    });
    assert.equal(shares[0].otpPhone, '********1234');
    assert.equal((await server.api('GET', '/share/document', { token })).status, 403);

    const sent = await server.api('POST', '/share/otp', { token, body: {} });
    assert.equal(sent.status, 200, sent.text);
    assert.equal(sent.body.channel, 'sms');
    for (let i = 0; i < 200 && gateway.received.length === 0; i++) await sleep(50);
    assert.equal(gateway.received.length, 1, 'the provider received the message');
    const [sms] = gateway.received;
    assert.equal(sms?.authorization, 'Bearer gateway-token-123');
    assert.match(sms?.contentType ?? '', /^application\/json/);
    assert.equal(sms?.body.to, '+41 79 555 12 34');
    const code = /\b(\d{6})\b/.exec(sms?.body.text ?? '')?.[1];
    assert.ok(code, `a six-digit code in "${sms?.body.text}"`);

    const wrong = await server.api('POST', '/share/unlock', {
      token,
      body: { otp: code === '000000' ? '111111' : '000000' },
    });
    assert.equal(wrong.status, 401);
    const unlocked = await server.api('POST', '/share/unlock', { token, body: { otp: code } });
    assert.equal(unlocked.body.status, 'SUCCESS');
    const read = await server.api('GET', '/share/document', { token: unlocked.body.token });
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.results[0].documentId, id);
    assert.equal(
      (await server.api('POST', '/share/unlock', { token, body: { otp: code } })).status,
      401,
      'a code works once',
    );
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { digest } from '../../src/pki/algorithms.js';
import { TimestampUnavailable } from '../../src/pki/errors.js';
import { readTimestampToken } from '../../src/pki/timestamp-token.js';
import { requestTimestamp } from '../../src/pki/tsa-client.js';
import { createTestPki, type TestPki } from '../fixtures/test-pki.js';
import { startTestTsa, type TestTsa } from '../fixtures/tsa-server.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

describe('RFC 3161 client against a real TSA on loopback', () => {
  let pki: TestPki;
  let tsa: TestTsa;
  const imprint = digest('SHA-256', new Uint8Array(Buffer.from('a signature value')));

  before(async () => {
    pki = await createTestPki();
    tsa = await startTestTsa(await pki.tsa());
  });
  after(() => tsa.close());

  it('returns a verified token whose imprint and time are what we asked for', async () => {
    const before = Date.now();
    const { token, info } = await requestTimestamp({
      url: tsa.url,
      digest: imprint,
      digestAlgorithm: 'SHA-256',
    });
    assert.ok(info.valid, info.problems.join('; '));
    assert.ok(Buffer.from(info.hashedMessage).equals(Buffer.from(imprint)));
    assert.ok(info.genTime.getTime() >= before - 1000 && info.genTime.getTime() <= Date.now() + 1000);
    assert.equal(info.certificates.length, 2, 'certReq: the TSA includes its certificate and chain');
    assert.deepEqual(readTimestampToken({ token }).serialNumber, info.serialNumber);
  });

  for (const mode of ['http-error', 'rejection', 'garbage', 'wrong-imprint', 'wrong-nonce'] as const) {
    it(`a TSA answer that is unusable (${mode}) is TimestampUnavailable, never a token`, async () => {
      tsa.setMode(mode);
      try {
        await assert.rejects(
          requestTimestamp({ url: tsa.url, digest: imprint, digestAlgorithm: 'SHA-256' }),
          TimestampUnavailable,
        );
      } finally {
        tsa.setMode('ok');
      }
    });
  }

  it('a connection the TSA closes as the request goes out is retried once on a new one (kept-alive race)', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(tsa.url).port) });
    try {
      const url = new URL(tsa.url);
      url.port = String(proxy.port);
      proxy.resetNext();
      const { info } = await requestTimestamp({ url: url.href, digest: imprint, digestAlgorithm: 'SHA-256' });
      assert.ok(info.valid, info.problems.join('; '));
    } finally {
      await proxy.close();
    }
  });

  it('an unreachable TSA is TimestampUnavailable', async () => {
    await assert.rejects(
      requestTimestamp({
        url: 'http://127.0.0.1:9/tsr',
        digest: imprint,
        digestAlgorithm: 'SHA-256',
        timeoutMs: 2000,
      }),
      TimestampUnavailable,
    );
  });

  it('a token from a certificate without the timeStamping usage is refused (RFC 3161 2.3)', async () => {
    const rogue = await startTestTsa(await pki.tsa({ name: 'Not a TSA', extendedKeyUsage: false }));
    try {
      await assert.rejects(
        requestTimestamp({ url: rogue.url, digest: imprint, digestAlgorithm: 'SHA-256' }),
        (e: unknown) => e instanceof TimestampUnavailable && /timeStamping/.test(e.message),
      );
    } finally {
      await rogue.close();
    }
  });
});

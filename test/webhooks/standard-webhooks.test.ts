import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { makePdf } from '../helpers/pdf.js';
import { upload } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { createWebhook, signatureValid, useReceiver, waitFor } from './helpers.js';

// Contract: webhook requests carry the Standard Webhooks headers beside x-signery-*. The receivers
// here verify them with the specification's own reference library (npm `standardwebhooks`), which
// also rejects a timestamp more than five minutes off: the server runs on the real clock.
describe('Contract: Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature)', () => {
  const server = useServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  let admin: string;
  const receiver = useReceiver();
  before(async () => (admin = await server.adminToken()));

  /** Creates a document through the API and answers the delivery of its `documentCreated`. */
  async function deliveryOfNewDocument() {
    const content = await upload(server, admin, makePdf());
    const created = await server.api('POST', '/documents', {
      token: admin,
      body: { body: { documentTitle: 'Standard', pdfFile: { content } } },
    });
    assert.equal(created.status, 200, created.text);
    const documentId = String(created.body.results[0].documentId);
    await waitFor(
      () => receiver.received.some((r) => r.json.documentId === documentId),
      10_000,
      'the documentCreated delivery',
    );
    const entry = receiver.received.find((r) => r.json.documentId === documentId);
    assert.ok(entry);
    return entry;
  }

  it('a generated secret is a whsec_ secret that the reference verifier accepts as given', async () => {
    const hook = await createWebhook(server, admin, { type: 'tenant', callbackUrl: receiver.url });
    try {
      assert.match(hook.hmacSecret, /^whsec_[A-Za-z0-9+/]{43}=$/, '32 random bytes in base64');
      const entry = await deliveryOfNewDocument();
      const headers = entry.headers as Record<string, string>;
      assert.equal(headers['webhook-id'], headers['x-signery-delivery'], 'webhook-id is the delivery id');
      assert.equal(
        Number(headers['webhook-timestamp']),
        Math.floor(Date.parse(String(headers['x-signery-timestamp'])) / 1000),
        'Unix seconds of this attempt',
      );
      assert.match(
        headers['webhook-signature'] ?? '',
        /^v1,[A-Za-z0-9+/]{43}=$/,
        'one signature, one secret',
      );
      assert.deepEqual(new Webhook(hook.hmacSecret).verify(entry.body, headers), entry.json);
      assert.ok(signatureValid(entry, hook.hmacSecret), 'x-signery-signature stays for existing receivers');

      assert.throws(
        () => new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(entry.body, headers),
        WebhookVerificationError,
        'another secret',
      );
      assert.throws(
        () => new Webhook(hook.hmacSecret).verify(entry.body.replace('Created', 'Deleted'), headers),
        WebhookVerificationError,
        'a changed body',
      );
      const replayed = {
        ...headers,
        'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 600),
      };
      assert.throws(
        () => new Webhook(hook.hmacSecret).verify(entry.body, replayed),
        WebhookVerificationError,
        'a replay ten minutes later: its timestamp no longer matches the signature',
      );
    } finally {
      await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin });
    }
  });

  it('a secret chosen by the integrator keys the signature with its own bytes (the verifier’s raw format)', async () => {
    const chosen = 'an-integrator-chosen-secret';
    const hook = await createWebhook(server, admin, {
      type: 'tenant',
      callbackUrl: receiver.url,
      hmacSecret: chosen,
    });
    try {
      assert.equal(hook.hmacSecret, chosen);
      const entry = await deliveryOfNewDocument();
      const headers = entry.headers as Record<string, string>;
      assert.deepEqual(new Webhook(chosen, { format: 'raw' }).verify(entry.body, headers), entry.json);
      assert.ok(signatureValid(entry, chosen));
    } finally {
      await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin });
    }
  });
});

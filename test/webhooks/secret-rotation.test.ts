import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { Clock } from '../../src/base/clock.js';
import { forgetExpiredSecrets } from '../../src/webhooks/rotate-secret.js';
import { createUser } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { createWebhook, emit, scopeOf, signatureValid, useReceiver, waitFor } from './helpers.js';

/**
 * The real clock, moved ahead by `offsetMs`: the reference verifier accepts a timestamp up to five
 * minutes off its own (real) clock, so a short grace period can be passed without waiting for it.
 */
class OffsetClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}

// Issue 27, item 3: a receiver verifying with the npm `standardwebhooks` reference library keeps
// accepting deliveries across a rotation, with either secret during the grace period and with the
// new one only after it.
describe('webhook secret rotation (POST /webhooks/:id/secret)', () => {
  const clock = new OffsetClock();
  const server = useServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' }, clock });
  let admin: string;
  const receiver = useReceiver();
  before(async () => (admin = await server.adminToken()));

  /** Emits an event for a fresh document id and answers its delivery as received. */
  async function deliveryOf(documentId: string) {
    await emit(server, await scopeOf(server, 'admin@example.test'), 'documentCreated', documentId);
    await waitFor(() => receiver.received.some((r) => r.json.documentId === documentId), 10_000, documentId);
    const entry = receiver.received.find((r) => r.json.documentId === documentId);
    assert.ok(entry);
    return { entry, headers: entry.headers as Record<string, string> };
  }

  const storedRow = (id: string) =>
    server.app.deps.db
      .selectFrom('webhooks')
      .select(['hmac_secret', 'previous_hmac_secret', 'previous_secret_until'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  it('signs with both secrets during the grace period, with the new one only after it; then forgets the old one', async () => {
    const hook = await createWebhook(server, admin, { type: 'tenant', callbackUrl: receiver.url });
    const old = hook.hmacSecret;
    try {
      const rotated = await server.api('POST', `/webhooks/${hook.id}/secret`, {
        token: admin,
        body: { graceHours: 0.05 },
      });
      assert.equal(rotated.status, 200, rotated.text);
      const fresh = String(rotated.body.hmacSecret);
      assert.match(fresh, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.notEqual(fresh, old);
      const until = Date.parse(rotated.body.previousSecretUntil);
      assert.ok(
        Math.abs(until - (clock.now().getTime() + 180_000)) < 10_000,
        rotated.body.previousSecretUntil,
      );

      const listed = await server.api('GET', '/webhooks', { token: admin });
      assert.ok(!listed.text.includes(fresh) && !listed.text.includes(old), 'secrets are never listed');

      const during = await deliveryOf('during-grace');
      const entries = during.headers['webhook-signature']!.split(' ');
      assert.equal(entries.length, 2, 'one v1 entry per active secret');
      assert.deepEqual(new Webhook(fresh).verify(during.entry.body, during.headers), during.entry.json);
      assert.deepEqual(new Webhook(old).verify(during.entry.body, during.headers), during.entry.json);
      // The new secret's entry comes first: it alone verifies the headers cut to their first entry.
      const firstOnly = { ...during.headers, 'webhook-signature': entries[0]! };
      new Webhook(fresh).verify(during.entry.body, firstOnly);
      assert.throws(() => new Webhook(old).verify(during.entry.body, firstOnly), WebhookVerificationError);
      assert.ok(signatureValid(during.entry, fresh), 'x-signery-signature uses the new secret');
      assert.ok(!signatureValid(during.entry, old));

      // Four minutes later (the grace was three), still within the verifier's five minutes of tolerance.
      clock.offsetMs = 240_000;
      const afterGrace = await deliveryOf('after-grace');
      assert.equal(afterGrace.headers['webhook-signature']!.split(' ').length, 1);
      assert.deepEqual(
        new Webhook(fresh).verify(afterGrace.entry.body, afterGrace.headers),
        afterGrace.entry.json,
      );
      assert.throws(
        () => new Webhook(old).verify(afterGrace.entry.body, afterGrace.headers),
        WebhookVerificationError,
        'the old secret no longer verifies',
      );

      await forgetExpiredSecrets(server.app.deps, clock.now());
      const row = await storedRow(hook.id);
      assert.deepEqual(row, { hmac_secret: fresh, previous_hmac_secret: null, previous_secret_until: null });
    } finally {
      clock.offsetMs = 0;
      await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin });
    }
  });

  it('grace defaults to WEBHOOK_SECRET_GRACE_HOURS (24); a chosen secret follows the creation rules; 0 drops the old secret at once; audited without secrets', async () => {
    const hook = await createWebhook(server, admin, { type: 'tenant', callbackUrl: receiver.url });
    try {
      const byDefault = await server.api('POST', `/webhooks/${hook.id}/secret`, { token: admin });
      assert.equal(byDefault.status, 200, byDefault.text);
      assert.ok(
        Math.abs(Date.parse(byDefault.body.previousSecretUntil) - (clock.now().getTime() + 24 * 3_600_000)) <
          10_000,
      );
      assert.equal((await storedRow(hook.id)).previous_hmac_secret, hook.hmacSecret);

      for (const body of [
        { hmacSecret: 'short' },
        { graceHours: -1 },
        { graceHours: 169 },
        { graceHours: 'soon' },
        { secret: 'an-unknown-field-123' },
      ]) {
        const refused = await server.api('POST', `/webhooks/${hook.id}/secret`, { token: admin, body });
        assert.equal(refused.status, 400, JSON.stringify(body));
        assert.equal(refused.body.code, 'VALIDATION_ERROR');
      }

      const chosen = 'a-chosen-rotated-secret';
      const now = await server.api('POST', `/webhooks/${hook.id}/secret`, {
        token: admin,
        body: { hmacSecret: chosen, graceHours: 0 },
      });
      assert.equal(now.status, 200, now.text);
      assert.deepEqual(now.body, { hmacSecret: chosen, previousSecretUntil: null });
      assert.deepEqual(await storedRow(hook.id), {
        hmac_secret: chosen,
        previous_hmac_secret: null,
        previous_secret_until: null,
      });

      const audit = await server.app.deps.db
        .selectFrom('audit_log')
        .select(['activity_type', 'data'])
        .where('object_id', '=', hook.id)
        .where('activity_type', '=', 'webhookSecretRotated')
        .execute();
      assert.equal(audit.length, 2);
      const logged = JSON.stringify(audit);
      assert.ok(!logged.includes(chosen) && !logged.includes(byDefault.body.hmacSecret));
      assert.ok(!logged.includes(hook.hmacSecret));
    } finally {
      await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin });
    }
  });

  it('is reached like the webhook’s other calls: 404 for whoever may not see it, 403 without use_webhooks', async () => {
    await createUser(server, { name: 'ann', organization: 'Sales', rights: ['use_webhooks'] });
    await createUser(server, { name: 'ben', organization: 'Sales', rights: ['use_webhooks'] });
    await createUser(server, { name: 'cid', organization: 'Sales' });
    const [ann, ben, cid] = await Promise.all(
      ['ann', 'ben', 'cid'].map((name) => server.login(name, 'user-password-1')),
    );
    const hook = await createWebhook(server, ann!, { type: 'organization', callbackUrl: receiver.url });
    try {
      const other = await server.api('POST', `/webhooks/${hook.id}/secret`, { token: ben });
      assert.equal(other.status, 404);
      assert.equal(other.body.code, 'NOT_FOUND');
      const unknown = await server.api('POST', '/webhooks/no-such-webhook/secret', { token: ann });
      assert.equal(unknown.status, 404);
      const withoutRight = await server.api('POST', `/webhooks/${hook.id}/secret`, { token: cid });
      assert.equal(withoutRight.status, 403);
      assert.equal((await storedRow(hook.id)).hmac_secret, hook.hmacSecret, 'unchanged');
      const own = await server.api('POST', `/webhooks/${hook.id}/secret`, { token: ann });
      assert.equal(own.status, 200);
    } finally {
      await server.api('DELETE', `/webhooks/${hook.id}`, { token: admin });
    }
  });
});

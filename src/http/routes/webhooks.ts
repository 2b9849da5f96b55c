import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../deps.js';
import { createWebhook } from '../../webhooks/create-webhook.js';
import { deleteWebhook } from '../../webhooks/delete-webhook.js';
import { EVENT_NAMES } from '../../webhooks/emit-event.js';
import { listDeliveries } from '../../webhooks/list-deliveries.js';
import { listWebhooks } from '../../webhooks/list-webhooks.js';
import { retryDelivery } from '../../webhooks/retry-delivery.js';
import { actorOf } from '../authentication.js';
import { Success, withErrors } from '../schemas.js';

const WebhookType = Type.Enum(['organization', 'tenant']);
const Id = Type.String({ minLength: 1, maxLength: 100 });
const WebhookParams = Type.Object({ webhookId: Id });

const Webhook = Type.Object({
  id: Type.String(),
  creator: Type.String({ description: 'Login name of the user who created it.' }),
  createDate: Type.String(),
  type: WebhookType,
  name: Type.String({
    description:
      'Id of the organization an organization webhook covers; the tenant’s id for a tenant webhook.',
  }),
  callbackUrl: Type.String(),
  hmacSecret: Type.Optional(
    Type.String({ description: 'Only in the answer to POST /webhooks: store it to verify signatures.' }),
  ),
});

const Attempt = Type.Object({
  attempt: Type.Integer(),
  time: Type.String(),
  statusCode: Type.Union([Type.Integer(), Type.Null()]),
  latencyMs: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  success: Type.Boolean(),
});

const Delivery = Type.Object({
  id: Type.String({ description: 'The `x-signery-delivery` header of every attempt.' }),
  event: Type.String(),
  documentId: Type.String(),
  actor: Type.String(),
  timestamp: Type.String(),
  createDate: Type.String(),
  status: Type.Enum(['pending', 'waiting', 'delivering', 'retrying', 'delivered', 'failed']),
  nextAttemptAt: Type.Union([Type.String(), Type.Null()]),
  attempts: Type.Array(Attempt),
});

const DELIVERY_RULES = `Each event in a webhook's scope is POSTed as JSON \`{documentId, event, actor, timestamp}\` (events: ${EVENT_NAMES.join(', ')}) with \`x-signery-signature\` (hex HMAC-SHA256 of the raw body with \`hmacSecret\`), \`x-signery-delivery\` (the same on every attempt of a delivery) and \`x-signery-timestamp\` (this attempt's time), and the Standard Webhooks headers \`webhook-id\` (the delivery id), \`webhook-timestamp\` (Unix seconds) and \`webhook-signature\` (\`v1,<base64 HMAC-SHA256 of "id.timestamp.body">\`, keyed with the base64-decoded rest of a \`whsec_\` secret, otherwise with the secret's UTF-8 bytes). A generated \`hmacSecret\` is \`whsec_\` and the base64 of 32 random bytes. Any 2xx within 10 s is success; otherwise it is retried with exponential backoff (first retry within 30 s) for 24 hours after the event, then given up. Deliveries to one webhook go out one at a time in event order; a failed-for-good delivery lets the next one go.`;

/** Who reaches a webhook (issue 20, item 11), told on every route that names one. */
const REACH =
  'A webhook is reached (listed, read, its deliveries listed and retried, deleted) only by its creator and the administrators of its scope: organization administrators for the organization webhooks of their organization, global and super administrators for every webhook of the tenant. Without the right `use_webhooks`: 403 FORBIDDEN. A webhook the caller may not reach is 404 NOT_FOUND, never 403, so its existence does not leak.';

/** Webhooks and their deliveries (spec: Webhooks, Events; Contract: webhook headers and retries). */
export function webhookRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/webhooks',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Create a webhook',
          description: `Needs the right \`use_webhooks\`. Organization administrators (and users granted the right) create \`organization\` webhooks for their own organization; global and super administrators also \`tenant\` webhooks, or organization webhooks for any organization (\`name\` = its id, default their own). \`callbackUrl\` must be http(s) and resolve to public addresses only (unless WEBHOOK_ALLOW_PRIVATE=true). Without \`hmacSecret\` one is generated; this answer is the only one that shows it. ${DELIVERY_RULES}`,
          body: Type.Object(
            {
              type: WebhookType,
              callbackUrl: Type.String({ minLength: 1, maxLength: 2048 }),
              hmacSecret: Type.Optional(Type.String({ minLength: 16, maxLength: 256 })),
              name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
            },
            { additionalProperties: false },
          ),
          response: withErrors({ 200: Webhook }),
        },
      },
      async (request) => createWebhook(deps, actorOf(request), request.body),
    );

    app.get(
      '/webhooks',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'List webhooks',
          description: `Global and super administrators list every webhook of the tenant, organization administrators those of their organization, anyone else holding \`use_webhooks\` the webhooks they created. Secrets are not shown. ${REACH}`,
          response: withErrors({ 200: Type.Object({ total: Type.Integer(), results: Type.Array(Webhook) }) }),
        },
      },
      async (request) => listWebhooks(deps, actorOf(request)),
    );

    app.delete(
      '/webhooks/:webhookId',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Delete a webhook',
          description: `There is no update: delete and create anew. Pending deliveries are dropped. ${REACH}`,
          params: WebhookParams,
          response: withErrors({ 200: Success }),
        },
      },
      async (request) => {
        await deleteWebhook(deps, actorOf(request), request.params.webhookId);
        return { status: 'SUCCESS' as const };
      },
    );

    app.get(
      '/webhooks/:webhookId/deliveries',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'List a webhook’s deliveries and their attempts',
          description: `Newest first. Each attempt has its time, status code (null without an answer), latency and error. ${REACH}`,
          params: WebhookParams,
          querystring: Type.Object(
            {
              from: Type.Optional(Type.Integer({ minimum: 0 })),
              size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
            },
            { additionalProperties: false },
          ),
          response: withErrors({
            200: Type.Object({ total: Type.Integer(), from: Type.Integer(), results: Type.Array(Delivery) }),
          }),
        },
      },
      async (request) => listDeliveries(deps, actorOf(request), request.params.webhookId, request.query),
    );

    app.post(
      '/webhooks/:webhookId/deliveries/:deliveryId/retry',
      {
        schema: {
          tags: ['webhooks'],
          summary: 'Send a delivery again',
          description: `A delivered or failed delivery is queued again (same delivery id, behind the webhook’s waiting deliveries, 24 hours of retries); one waiting for its next retry is tried now. ${REACH}`,
          params: Type.Object({ webhookId: Id, deliveryId: Id }),
          response: withErrors({ 200: Success }),
        },
      },
      async (request) => {
        await retryDelivery(deps, actorOf(request), request.params.webhookId, request.params.deliveryId);
        return { status: 'SUCCESS' as const };
      },
    );
  };
}

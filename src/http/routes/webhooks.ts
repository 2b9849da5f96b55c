import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Deps } from '../../core/deps.js';
import { createWebhook } from '../../webhooks/create-webhook.js';
import { deleteWebhook } from '../../webhooks/delete-webhook.js';
import { EVENT_NAMES } from '../../core/events/emit-event.js';
import { listDeliveries } from '../../webhooks/list-deliveries.js';
import { DEFAULT_FEED_PAGE, listEvents, MAX_FEED_PAGE } from '../../webhooks/list-events.js';
import { listWebhooks } from '../../webhooks/list-webhooks.js';
import {
  MAX_REPLAY_EVENTS,
  MAX_REPLAY_RANGE_MS,
  replayDeliveries,
} from '../../webhooks/replay-deliveries.js';
import { retryDelivery } from '../../webhooks/retry-delivery.js';
import { RESPONSE_EXCERPT_BYTES } from '../../webhooks/post-callback.js';
import { rotateSecret } from '../../webhooks/rotate-secret.js';
import { transferWebhook } from '../../webhooks/transfer-webhook.js';
import { actorOf } from '../authentication.js';
import { deleteByKey, postBody } from '../route-shapes.js';
import { EXAMPLE_IDS } from '../../core/examples.js';
import { Success, withErrors, withExamples } from '../schemas.js';
import { Id } from '../../core/common-contract.js';
import { answerSuccess } from '../answers.js';
import {
  CreateWebhookBody,
  ReplayBody,
  RotateSecretBody,
  TransferWebhookBody,
  WebhookType,
} from '../../webhooks/contract.js';

const WebhookParams = Type.Object({ webhookId: Id });

const WEBHOOK_EXAMPLE = {
  id: EXAMPLE_IDS.webhookId,
  creator: 'admin@example.com',
  createDate: '2026-03-01T08:00:00.000Z',
  type: 'organization',
  name: EXAMPLE_IDS.organization,
  callbackUrl: 'https://erp.example.com/hooks/signery',
  state: 'active',
  pausedAt: null,
};
const SECRET_EXAMPLE = 'whsec_MrWpv6Rv2VR7qmQMzNfqddHY1V5RV5nQlYdxzUrpza8=';

const Webhook = Type.Object({
  id: Type.String(),
  creator: Type.String({
    description:
      'Login name of the user who holds it: its creator, or whom an administrator transferred it to (PUT /webhooks/{webhookId}/owner).',
  }),
  createDate: Type.String(),
  type: WebhookType,
  name: Type.String({
    description:
      'Id of the organization an organization webhook covers; the tenant’s id for a tenant webhook.',
  }),
  callbackUrl: Type.String(),
  state: Type.Enum(['active', 'paused'], {
    description: '`paused` while no one entitled holds it (see POST /webhooks): nothing is delivered.',
  }),
  pausedAt: Type.Union([Type.String(), Type.Null()], { description: 'Since when it is paused.' }),
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
  responseExcerpt: Type.Union([Type.String(), Type.Null()], {
    description: `The first ${RESPONSE_EXCERPT_BYTES} bytes of the receiver's answer as UTF-8 text (invalid bytes and NUL replaced by U+FFFD, a character cut at the end left out); null without an answer.`,
  }),
});

const DELIVERIES_EXAMPLE = {
  total: 1,
  from: 0,
  results: [
    {
      id: EXAMPLE_IDS.deliveryId,
      event: 'documentCompleted',
      documentId: EXAMPLE_IDS.documentId,
      actor: 'ivy@example.com',
      timestamp: '2026-03-01T08:05:11.000Z',
      createDate: '2026-03-01T08:05:11.000Z',
      status: 'delivered',
      nextAttemptAt: null,
      attempts: [
        {
          attempt: 1,
          time: '2026-03-01T08:05:11.200Z',
          statusCode: 204,
          latencyMs: 38,
          error: null,
          success: true,
          responseExcerpt: '',
        },
      ],
    },
  ],
};

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

const DELIVERY_RULES = `Each event in a webhook's scope is POSTed as JSON \`{documentId, event, actor, timestamp}\` (events: ${EVENT_NAMES.join(', ')}) with \`x-signery-signature\` (hex HMAC-SHA256 of the raw body with \`hmacSecret\`; during a secret rotation, with the new secret), \`x-signery-delivery\` (the same on every attempt of a delivery) and \`x-signery-timestamp\` (this attempt's time), and the Standard Webhooks headers \`webhook-id\` (the delivery id), \`webhook-timestamp\` (Unix seconds) and \`webhook-signature\` (\`v1,<base64 HMAC-SHA256 of "id.timestamp.body">\`, one space-separated entry per active secret, the newest first: two during a secret rotation's grace period; keyed with the base64-decoded rest of a \`whsec_\` secret, otherwise with the secret's UTF-8 bytes). A generated \`hmacSecret\` is \`whsec_\` and the base64 of 32 random bytes. Any 2xx within 10 s is success; otherwise it is retried with exponential backoff (first retry within 30 s) for 24 hours after the event, then given up. Deliveries to one webhook go out one at a time in event order; a failed-for-good delivery lets the next one go.`;

/** Whose authority a webhook delivers on (core/events/webhook-holders.ts), told where it is created, listed and transferred. */
const HOLDING =
  'A webhook delivers on the authority of the user who holds it (its creator, or whom an administrator transferred it to), only while that user could create it now: an active account with the right `use_webhooks` whose role reaches its scope (an organization webhook: a user of that organization, or a global or super administrator; a tenant webhook: a global or super administrator). When the holder loses the right, the role, the organization, is suspended or deleted, the webhook is paused (`state: paused`, audit record `webhookPaused`): no event is queued for it and a queued one is not sent (the events stay in GET /events for 30 days), until the holder is entitled again (`webhookResumed`) or an administrator of its scope transfers it with PUT /webhooks/{webhookId}/owner.';

/** Who reaches a webhook, told on every route that names one. */
const REACH =
  'A webhook is reached (listed, read, its deliveries listed, retried and replayed, its secret rotated, deleted) only by its creator and the administrators of its scope: organization administrators for the organization webhooks of their organization, global and super administrators for every webhook of the tenant. Without the right `use_webhooks`: 403 FORBIDDEN. A webhook the caller may not reach is 404 NOT_FOUND, never 403, so its existence does not leak.';

/** Webhooks, their deliveries, and the events feed. */
export function webhookRoutes(deps: Deps): FastifyPluginAsyncTypebox {
  return async (app) => {
    postBody(app, deps, {
      path: '/webhooks',
      tag: 'webhooks',
      operationId: 'createWebhook',
      summary: 'Create a webhook',
      description: `Needs the right \`use_webhooks\`. Organization administrators (and users granted the right) create \`organization\` webhooks for their own organization; global and super administrators also \`tenant\` webhooks, or organization webhooks for any organization (\`name\` = its id, default their own). \`callbackUrl\` must be http(s) and resolve to public addresses only (unless WEBHOOK_ALLOW_PRIVATE=true). Without \`hmacSecret\` one is generated; this answer is the only one that shows it. ${HOLDING} ${DELIVERY_RULES}`,
      body: CreateWebhookBody,
      answers: {
        200: withExamples(Webhook, { ...WEBHOOK_EXAMPLE, hmacSecret: SECRET_EXAMPLE }),
      },
      call: createWebhook,
    });

    app.get(
      '/webhooks',
      {
        schema: {
          tags: ['webhooks'],
          operationId: 'listWebhooks',
          summary: 'List webhooks',
          description: `Global and super administrators list every webhook of the tenant, organization administrators those of their organization, anyone else holding \`use_webhooks\` the webhooks they hold. Secrets are not shown. ${HOLDING} ${REACH}`,
          response: withErrors({
            200: Type.Object(
              { total: Type.Integer(), results: Type.Array(Webhook) },
              { examples: [{ total: 1, results: [WEBHOOK_EXAMPLE] }] },
            ),
          }),
        },
      },
      async (request) => listWebhooks(deps, actorOf(request)),
    );

    deleteByKey(app, deps, {
      path: '/webhooks/:webhookId',
      tag: 'webhooks',
      operationId: 'deleteWebhook',
      summary: 'Delete a webhook',
      description: `There is no update: delete and create anew. Pending deliveries are dropped. ${REACH}`,
      params: WebhookParams,
      key: 'webhookId',
      remove: deleteWebhook,
    });

    app.get(
      '/webhooks/:webhookId/deliveries',
      {
        schema: {
          tags: ['webhooks'],
          operationId: 'listWebhookDeliveries',
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
            200: Type.Object(
              { total: Type.Integer(), from: Type.Integer(), results: Type.Array(Delivery) },
              { examples: [DELIVERIES_EXAMPLE] },
            ),
          }),
        },
      },
      async (request) => listDeliveries(deps, actorOf(request), request.params.webhookId, request.query),
    );

    app.put(
      '/webhooks/:webhookId/owner',
      {
        schema: {
          tags: ['webhooks'],
          operationId: 'transferWebhook',
          summary: 'Transfer a webhook to another holder',
          description: `Administrators of the webhook's scope only (anyone else who reaches it: 403). \`owner\`: the id or login name of a user of the tenant who may hold it (400 VALIDATION_ERROR otherwise; an unknown user 404). The webhook keeps its URL, secret and pending deliveries, becomes the new holder's, and delivers again at once if it was paused. Answers the webhook. ${HOLDING} ${REACH}`,
          params: WebhookParams,
          body: TransferWebhookBody,
          response: withErrors({ 200: withExamples(Webhook, WEBHOOK_EXAMPLE) }),
        },
      },
      async (request) =>
        transferWebhook(deps, actorOf(request), request.params.webhookId, request.body.owner),
    );

    app.post(
      '/webhooks/:webhookId/deliveries/:deliveryId/retry',
      {
        schema: {
          tags: ['webhooks'],
          operationId: 'retryWebhookDelivery',
          summary: 'Send a delivery again',
          description: `A delivered or failed delivery is queued again (same delivery id, behind the webhook’s waiting deliveries, 24 hours of retries); one waiting for its next retry is tried now. ${REACH}`,
          params: Type.Object({ webhookId: Id, deliveryId: Id }),
          response: withErrors({ 200: Success }),
        },
      },
      async (request) =>
        answerSuccess(
          retryDelivery(deps, actorOf(request), request.params.webhookId, request.params.deliveryId),
        ),
    );

    app.post(
      '/webhooks/:webhookId/secret',
      {
        // The body is optional: a request without one is an empty one.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          tags: ['webhooks'],
          operationId: 'rotateWebhookSecret',
          summary: 'Rotate a webhook’s secret',
          description: `Gives the webhook a new \`hmacSecret\` (generated like at creation unless chosen; this answer is the only one that shows it) and keeps the replaced one signing for a grace period: \`graceHours\`, by default WEBHOOK_SECRET_GRACE_HOURS (24). Meanwhile each delivery's \`webhook-signature\` carries two \`v1,\` entries, the new secret's first, so a receiver verifying with either secret accepts it and can switch at any moment; \`x-signery-signature\` (a single value) uses the new secret from the rotation on. Worker nodes pick the new secret up within 5 seconds. After the grace period the old secret is deleted; \`graceHours: 0\` drops it at once (a leaked secret). Rotating again during a grace period replaces the older of the two. Audited (without the secrets). ${REACH}`,
          params: WebhookParams,
          body: RotateSecretBody,
          response: withErrors({
            200: Type.Object(
              {
                hmacSecret: Type.String({ description: 'The new secret: store it to verify signatures.' }),
                previousSecretUntil: Type.Union([Type.String(), Type.Null()], {
                  description:
                    'Until when the replaced secret still signs; null when it was dropped at once.',
                }),
              },
              {
                examples: [
                  {
                    hmacSecret: 'whsec_3k9Qm2vXkP7zLw4Ty8Nc1Hb5Ds3Fa7GeJr6Rt0Uy2Io=',
                    previousSecretUntil: '2026-03-02T08:00:00.000Z',
                  },
                ],
              },
            ),
          }),
        },
      },
      async (request) => rotateSecret(deps, actorOf(request), request.params.webhookId, request.body),
    );

    app.post(
      '/webhooks/:webhookId/replay',
      {
        schema: {
          tags: ['webhooks'],
          operationId: 'replayWebhookEvents',
          summary: 'Send a time range of events again',
          description: `Queues again every event of the webhook's scope that happened in \`[from, to)\`, in the order they happened, behind the webhook's deliveries already waiting (one at a time, like all its deliveries). An event already delivered (or failed) to this webhook is sent again as the same delivery: the same \`webhook-id\` and \`x-signery-delivery\`, so a receiver that has it can ignore it, with a new 24 hours of retries; one still on its way is not queued twice nor counted. An event without a delivery to this webhook (purged after 30 days, or one that raced with the webhook's creation) gets a new delivery. Events from before the webhook existed are not sent (a replay resends what the webhook owed, it does not backfill). At most ${MAX_REPLAY_RANGE_MS / 86_400_000} days between \`from\` and \`to\` (400 VALIDATION_ERROR) and ${MAX_REPLAY_EVENTS} events (413 LIMIT_EXCEEDED: replay smaller ranges). Answers how many deliveries were queued. Audited. ${REACH}`,
          params: WebhookParams,
          body: ReplayBody,
          response: withErrors({
            200: Type.Object({ replayed: Type.Integer() }, { examples: [{ replayed: 12 }] }),
          }),
        },
      },
      async (request) => replayDeliveries(deps, actorOf(request), request.params.webhookId, request.body),
    );

    app.get(
      '/events',
      {
        schema: {
          tags: ['webhooks'],
          operationId: 'listEvents',
          summary: 'The events feed, for integrators who poll instead of receiving webhooks',
          description: `The events webhooks deliver, in the order they became visible, after \`after\` (a \`cursor\` of an earlier answer; none: from the oldest kept). Ask again with the answer's \`cursor\` and every event comes exactly once, whichever node answers: an event written by a transaction still running is listed only once it has committed, after everything before it. \`more\` says a next page is already there. The right \`use_webhooks\` (403 without); global and super administrators see the whole tenant's events, everyone else their organization's. Events are kept 30 days.`,
          querystring: Type.Object(
            {
              after: Type.Optional(
                Type.String({
                  minLength: 1,
                  maxLength: 200,
                  description: 'The `cursor` of the last answer.',
                }),
              ),
              limit: Type.Optional(
                Type.Integer({
                  minimum: 1,
                  maximum: MAX_FEED_PAGE,
                  default: DEFAULT_FEED_PAGE,
                  description: 'Events per page.',
                }),
              ),
            },
            { additionalProperties: false },
          ),
          response: withErrors({
            200: Type.Object(
              {
                events: Type.Array(
                  Type.Object({
                    id: Type.String(),
                    event: Type.String(),
                    documentId: Type.String(),
                    actor: Type.String(),
                    timestamp: Type.String(),
                  }),
                ),
                cursor: Type.Union([Type.String(), Type.Null()], {
                  description: 'Where to ask from next (null: nothing was ever listed).',
                }),
                more: Type.Boolean(),
              },
              {
                examples: [
                  {
                    events: [
                      {
                        id: EXAMPLE_IDS.deliveryId,
                        event: 'documentSigned',
                        documentId: EXAMPLE_IDS.documentId,
                        actor: 'ivy@example.com',
                        timestamp: '2026-03-01T08:05:11.000Z',
                      },
                    ],
                    cursor: 'eDE3NDYuMTI',
                    more: false,
                  },
                ],
              },
            ),
          }),
        },
      },
      async (request) => listEvents(deps, actorOf(request), request.query),
    );
  };
}

import { Type } from 'typebox';

/**
 * What the webhook calls take: the schemas the routes check requests against (with their OpenAPI
 * descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

export const WebhookType = Type.Enum(['organization', 'tenant']);

/** A webhook secret chosen by the integrator: the same rule at creation and at rotation. */
export const ChosenSecret = Type.String({
  minLength: 16,
  maxLength: 256,
  description:
    'A secret of your own instead of a generated one: 16 to 256 characters (400 otherwise). A `whsec_` secret is keyed with the base64-decoded rest, any other with its UTF-8 bytes.',
});

/** The body of POST /webhooks: the scope, where events go, and optionally its secret and name. */
export const CreateWebhookBody = Type.Object(
  {
    type: WebhookType,
    callbackUrl: Type.String({ minLength: 1, maxLength: 2048 }),
    hmacSecret: Type.Optional(ChosenSecret),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  {
    additionalProperties: false,
    examples: [{ type: 'organization', callbackUrl: 'https://erp.example.com/hooks/signery' }],
  },
);

/** The body of PUT /webhooks/{webhookId}/owner: the new holder. */
export const TransferWebhookBody = Type.Object(
  { owner: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false, examples: [{ owner: 'ops@example.com' }] },
);

/** The body of POST /webhooks/{webhookId}/secret (optional: none is `{}`). */
export const RotateSecretBody = Type.Object(
  {
    hmacSecret: Type.Optional(ChosenSecret),
    graceHours: Type.Optional(Type.Number({ minimum: 0, maximum: 168 })),
  },
  { additionalProperties: false, examples: [{ graceHours: 24 }] },
);

/** The body of POST /webhooks/{webhookId}/replay: the time range of events to send again. */
export const ReplayBody = Type.Object(
  {
    from: Type.String({
      minLength: 1,
      maxLength: 40,
      description: 'ISO 8601 date-time, included.',
    }),
    to: Type.String({ minLength: 1, maxLength: 40, description: 'ISO 8601 date-time, excluded.' }),
  },
  {
    additionalProperties: false,
    examples: [{ from: '2026-03-01T00:00:00Z', to: '2026-03-02T00:00:00Z' }],
  },
);

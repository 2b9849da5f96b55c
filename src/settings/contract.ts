import { Type } from 'typebox';

/**
 * What the configuration and counter calls take: the schemas the routes check requests against (with
 * their OpenAPI descriptions and examples), from which the use cases' input types are made (`Static<>`).
 */

/** Tenant counters by name: `{name: value}`. */
export const Counters = Type.Record(
  Type.String({ pattern: '^[A-Za-z0-9_.-]{1,100}$' }),
  Type.Integer({ minimum: 0 }),
  {
    additionalProperties: false,
  },
);

/** The body of PUT /configuration: what to merge into the caller's preferences. */
export const ConfigurationBody = Type.Object(
  { configuration: Type.Object({}, { additionalProperties: true, maxProperties: 100 }) },
  {
    additionalProperties: false,
    examples: [{ configuration: { ui: { language: 'en', pageSize: 50 } } }],
  },
);

/** The body of PUT /counters. */
export const CountersBody = Type.Object(
  { counters: Counters },
  { additionalProperties: false, examples: [{ counters: { invoiceNumber: 1042 } }] },
);

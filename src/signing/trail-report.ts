import { Type } from 'typebox';

/** The audit trail a document carries, as the verification report shows it (core/audit/embedded-trail.ts). */
export const AuditTrailReport = Type.Object(
  {
    present: Type.Boolean(),
    intact: Type.Boolean({
      description:
        'A valid signature covers the trail, every event’s chain hash recomputes from its fields, and the newest revision it lists is in the file.',
    }),
    coveredBy: Type.Optional(
      Type.String({ description: 'The field name of the signature covering the trail.' }),
    ),
    problems: Type.Array(Type.String()),
    document: Type.Optional(
      Type.Object({ id: Type.String(), title: Type.String() }, { additionalProperties: false }),
    ),
    anchor: Type.Optional(
      Type.Object(
        { hash: Type.String(), records: Type.Integer() },
        {
          additionalProperties: false,
          description: 'The tenant audit chain’s head when the trail was made.',
        },
      ),
    ),
    events: Type.Array(
      Type.Object(
        {
          occurredAt: Type.String(),
          activityType: Type.String(),
          actor: Type.Union([Type.String(), Type.Null()]),
          hash: Type.String(),
          intact: Type.Boolean(),
        },
        { additionalProperties: false },
      ),
    ),
    revisions: Type.Array(
      Type.Object(
        {
          revision: Type.Integer(),
          reason: Type.String(),
          sha256: Type.String(),
          inFile: Type.Boolean({
            description: 'The file holds this revision as one of its own (a prefix of it).',
          }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Only for a PDF that carries Signery’s audit trail (completed documents sealed on completion): what it proves, checked with nothing but the file.',
  },
);

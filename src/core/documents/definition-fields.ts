import { Type, type Static } from 'typebox';
import { ValidationError } from '../../base/errors.js';
import type { CustomField } from './custom-fields.js';

/**
 * A field a document definition describes (`fields[]`). A document of that type carries it in its
 * `customFields`, under the same `key`.
 */
export const DefinitionField = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The `customFields[].key` that carries it.',
    }),
    displayName: Type.Optional(Type.String({ maxLength: 500 })),
    type: Type.Enum(['string', 'number', 'date'], {
      description: 'A document’s `customFields` entry with this key must have this `type`.',
    }),
    required: Type.Optional(
      Type.Boolean({
        description:
          'Every document of this type carries the field with a non-empty value: creating one without it, or changing its `customFields` or `documentType` so that it lacks it, is 400 VALIDATION_ERROR naming the field. Drafts may lack it.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type DefinitionField = Static<typeof DefinitionField>;

/**
 * Issue 24, item 14: the fields a definition describes hold in the documents of its type. Each
 * required field is among `customFields` with a value that is not blank, and a field the definition
 * describes has the definition's `type`. Other keys are the integration's own and pass as they are.
 * `path` is where `customFields` sit in the request.
 */
export function assertDefinitionFields(
  definition: { name: string; fields: readonly DefinitionField[] },
  customFields: readonly CustomField[],
  path: string,
): void {
  for (const [i, field] of customFields.entries()) {
    const described = definition.fields.find((f) => f.key === field.key);
    if (!described) continue;
    if (field.type !== described.type)
      throw new ValidationError(`${path}[${i}].type`, `must be [${described.type}]`);
    if (described.required && field.value.trim() === '')
      throw new ValidationError(`${path}[${i}].value`, 'is not allowed to be empty');
  }
  for (const described of definition.fields) {
    if (described.required && !customFields.some((f) => f.key === described.key))
      throw new ValidationError(
        path,
        `must contain the field "${described.key}", which document type ${definition.name} requires`,
      );
  }
}

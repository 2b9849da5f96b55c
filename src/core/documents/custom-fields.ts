import type { Static } from 'typebox';
import type { CustomField as CustomFieldSchema } from './document-contract.js';
import { ValidationError } from '../../base/errors.js';

/** A custom field as a request gives it. */
export type CustomFieldInput = Static<typeof CustomFieldSchema>;

export interface CustomField {
  key: string;
  displayName: string;
  type: 'string' | 'number' | 'date';
  value: string;
}

/**
 * spec Custom field: the value is always stored and returned as a string; a number 12500 becomes
 * "12500"; a date may be sent as an ISO string or epoch milliseconds and is returned as ISO.
 */
export function normalizeCustomFields(fields: CustomFieldInput[], path = 'body.customFields'): CustomField[] {
  const keys = new Set<string>();
  return fields.map((field, i) => {
    const at = `${path}[${i}].value`;
    if (keys.has(field.key)) {
      throw new ValidationError(`${path}[${i}].key`, 'contains a duplicate value');
    }
    keys.add(field.key);
    let value: string;
    if (field.type === 'number') {
      const n = typeof field.value === 'number' ? field.value : Number(field.value);
      if (typeof field.value === 'string' && field.value.trim() === '') {
        throw new ValidationError(at, 'must be a number');
      }
      if (!Number.isFinite(n)) throw new ValidationError(at, 'must be a number');
      value = String(n);
    } else if (field.type === 'date') {
      const date =
        typeof field.value === 'number' || /^-?\d+$/.test(field.value)
          ? new Date(Number(field.value))
          : new Date(field.value);
      if (Number.isNaN(date.getTime())) {
        throw new ValidationError(at, 'must be in ISO 8601 date format');
      }
      value = date.toISOString();
    } else {
      value = String(field.value);
    }
    return { key: field.key, displayName: field.displayName ?? field.key, type: field.type, value };
  });
}

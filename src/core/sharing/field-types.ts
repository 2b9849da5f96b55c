import type { Kysely } from 'kysely';
import type { Actor } from '../access/actor.js';
import { enumRecords, findVisibleEnum } from '../access/enum-access.js';
import { ValidationError } from '../../base/errors.js';
import type { Database } from '../../store/db/schema.js';
import { DEFAULT_DATE_FORMAT, dateFormatProblem, parseDate } from './date-format.js';

/**
 * The kinds of value a share's `annotation` field may ask for, named by its `subtype` (spec Signature
 * field: "subtype: `annotation_generic`; `annotation_submitted_file`"; these follow the same naming),
 * with what their `config` (a JSON string) may say:
 * - `annotation_date`: a date, written in the recipient's share `dateFormat` (default `yyyy-MM-dd`);
 *   a predefined `text` in that format prefills it, else the signer's page offers today;
 * - `annotation_checkbox`: `"true"` or `"false"`; a checked box is written as `X`, an unchecked one
 *   not at all; a `required` box must be checked;
 * - `annotation_select`: one of its options, by `value`; the option's `label` is written. Options
 *   come from `config.options` (`["A", "B"]` or `[{"value": "a", "label": "A"}]`) or from an enum of
 *   the sharer's organization, `config.enum` naming it (GET /enums/{name}); they are copied into the
 *   field as `options` when the document is shared, so the recipient answers what they were shown;
 * - `annotation_number`: a decimal number (`-12.5`), within `config.min` and `config.max`, with at
 *   most `config.decimals` digits after the point.
 * The answer is the `text` of the sign call's `annotations` entry that names the field by `fieldId`.
 */
export const VALUE_SUBTYPES = {
  date: 'annotation_date',
  checkbox: 'annotation_checkbox',
  select: 'annotation_select',
  number: 'annotation_number',
} as const;

export interface FieldOption {
  value: string;
  label: string;
}

type Field = Record<string, unknown>;

/** Options a select field may have (its config is at most 10,000 characters; an enum is not). */
const MAX_OPTIONS = 1000;
const NUMBER = /^-?\d+(\.\d+)?$/;

/** The parsed `config` of a field: a JSON object, or nothing (absent, not JSON, not an object). */
export function fieldConfig(field: Field): Record<string, unknown> | undefined {
  if (typeof field.config !== 'string') return undefined;
  try {
    const parsed: unknown = JSON.parse(field.config);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    // spec Signature field: `config` is JSON in a string, but clients have sent other text there;
    // such a config configures nothing and is kept as given.
    return undefined;
  }
}

/**
 * POST /share: the value fields are ones the signer's page can show (issue 25). A select field has
 * options, which it gets here as `options`; a number field's `min`, `max` and `decimals` are numbers
 * that leave some answer; a date field's recipients have a `dateFormat` of day, month and year
 * numbers, and its predefined `text` is a date in it. 400 naming the field otherwise.
 */
export async function prepareValueFields<T extends Field>(
  db: Kysely<Database>,
  actor: Actor,
  fields: T[],
  dateFormatsOf: (field: T) => (string | undefined)[],
): Promise<T[]> {
  const prepared: T[] = [];
  for (const [i, field] of fields.entries()) {
    const at = `signatureFields[${i}]`;
    if (field.type !== 'annotation') prepared.push(field);
    else if (field.subtype === VALUE_SUBTYPES.select)
      prepared.push({ ...field, options: await selectOptions(db, actor, field, at) });
    else {
      if (field.subtype === VALUE_SUBTYPES.number) numberRules(field, at);
      if (field.subtype === VALUE_SUBTYPES.date) checkDateField(field, dateFormatsOf(field), at);
      prepared.push(field);
    }
  }
  return prepared;
}

async function selectOptions(
  db: Kysely<Database>,
  actor: Actor,
  field: Field,
  at: string,
): Promise<FieldOption[]> {
  const config = fieldConfig(field);
  let options: FieldOption[];
  if (typeof config?.enum === 'string') {
    const found = await findVisibleEnum(db, actor, config.enum);
    if (!found) throw new ValidationError(`${at}.config`, `enum "${config.enum}" is not an enum of yours`);
    options = enumRecords(found).map((r) => ({ value: r.value, label: r.label || r.value }));
  } else if (Array.isArray(config?.options)) {
    options = config.options.map((option: unknown, j) => listedOption(option, `${at}.config.options[${j}]`));
  } else {
    throw new ValidationError(
      `${at}.config`,
      'must give the options of an annotation_select field: {"options": [...]} or {"enum": "<enum name>"}',
    );
  }
  if (options.length === 0 || options.length > MAX_OPTIONS) {
    throw new ValidationError(`${at}.config`, `must give 1 to ${MAX_OPTIONS} options`);
  }
  const twice = options.findIndex((o, j) => options.findIndex((p) => p.value === o.value) !== j);
  if (twice >= 0)
    throw new ValidationError(`${at}.config`, `gives the option "${options[twice]!.value}" twice`);
  return options;
}

function listedOption(option: unknown, at: string): FieldOption {
  if (typeof option === 'string' && option.trim() !== '') return { value: option, label: option };
  const entry = option !== null && typeof option === 'object' ? (option as Record<string, unknown>) : {};
  if (typeof entry.value !== 'string' || entry.value.trim() === '') {
    throw new ValidationError(at, 'must be a text, or an object with a "value" text and an optional "label"');
  }
  const label = typeof entry.label === 'string' && entry.label.trim() !== '' ? entry.label : entry.value;
  return { value: entry.value, label };
}

interface NumberRules {
  min?: number;
  max?: number;
  decimals?: number;
}

/** A number field's `min`, `max` and `decimals` from its config, checked (400 naming the field). */
function numberRules(field: Field, at: string): NumberRules {
  const config = fieldConfig(field) ?? {};
  const rules: NumberRules = {};
  for (const key of ['min', 'max', 'decimals'] as const) {
    const value = config[key];
    if (value === undefined) continue;
    const whole = key === 'decimals';
    if (
      typeof value !== 'number' ||
      !Number.isFinite(value) ||
      (whole && !(Number.isInteger(value) && value >= 0 && value <= 10))
    ) {
      throw new ValidationError(
        `${at}.config`,
        `${key} must be ${whole ? 'a whole number from 0 to 10' : 'a number'}`,
      );
    }
    rules[key] = value;
  }
  if (rules.min !== undefined && rules.max !== undefined && rules.min > rules.max) {
    throw new ValidationError(`${at}.config`, 'min must not be more than max');
  }
  return rules;
}

/** Why `value` is outside a number field's `min`..`max` (undefined: it is inside). */
function outOfRange(value: number, { min, max }: NumberRules): string | undefined {
  if ((min === undefined || value >= min) && (max === undefined || value <= max)) return undefined;
  if (min !== undefined && max !== undefined) return `must be from ${min} to ${max}`;
  return min !== undefined ? `must be at least ${min}` : `must be at most ${max}`;
}

function checkDateField(field: Field, formats: (string | undefined)[], at: string): void {
  for (const format of new Set(formats.map((f) => f ?? DEFAULT_DATE_FORMAT))) {
    const problem = dateFormatProblem(format);
    if (problem) {
      throw new ValidationError(
        at,
        `is a date field, but its recipient's dateFormat "${format}" ${problem}: the signer could not write a date in it`,
      );
    }
    if (typeof field.text === 'string' && field.text !== '' && !parseDate(field.text, format)) {
      throw new ValidationError(
        `${at}.text`,
        `must be a date written ${format} (the recipient's dateFormat)`,
      );
    }
  }
}

/** Whether a field's answer gives what a `required` field needs: some text, and a checked box. */
export function answersRequired(field: Field, text: string): boolean {
  if (field.subtype === VALUE_SUBTYPES.checkbox) return text === 'true';
  return text.trim() !== '';
}

/**
 * What the sign call writes into the document for a value field's answer (`at` names the answer in
 * the call, `name` the field), or undefined when nothing is written (an unchecked box). A text that
 * is not a value of the field's kind is 400 naming the answer and the field.
 */
export function writtenAnswer(
  field: Field,
  text: string,
  context: { at: string; name: string; dateFormat: string | undefined },
): string | undefined {
  const refuse = (problem: string) =>
    new ValidationError(context.at, `${problem}, for the field "${context.name}"`);
  switch (field.subtype) {
    case VALUE_SUBTYPES.date: {
      const format = context.dateFormat ?? DEFAULT_DATE_FORMAT;
      if (!parseDate(text, format)) throw refuse(`must be a date written ${format} (the share's dateFormat)`);
      return text.trim();
    }
    case VALUE_SUBTYPES.checkbox:
      if (text !== 'true' && text !== 'false') throw refuse('must be "true" or "false"');
      return text === 'true' ? 'X' : undefined;
    case VALUE_SUBTYPES.select: {
      const options = Array.isArray(field.options) ? (field.options as FieldOption[]) : [];
      const chosen = options.find((o) => o.value === text);
      if (!chosen) throw refuse(`must be one of the options [${options.map((o) => o.value).join(', ')}]`);
      return chosen.label;
    }
    case VALUE_SUBTYPES.number: {
      const rules = numberRules(field, context.at);
      const value = text.trim();
      if (!NUMBER.test(value)) throw refuse('must be a number such as 1250 or -12.5');
      const decimals = value.split('.')[1]?.length ?? 0;
      if (rules.decimals !== undefined && decimals > rules.decimals) {
        throw refuse(`must have at most ${rules.decimals} digits after the point`);
      }
      const range = outOfRange(Number(value), rules);
      if (range) throw refuse(range);
      return value;
    }
    default:
      return text;
  }
}

import { DEFAULT_DATE_FORMAT, formatIsoDate, isoDateOf, todayIso } from './date-format.js';
import type { formDialog } from './dialogs.js';
import { numberProblem, type Field } from './fields.js';
import { t, type MessageKey } from './i18n.js';

type FormOptions = Parameters<typeof formDialog>[0];

/**
 * The dialog that fills in a value field, with the native control of its kind: a text input, a date
 * picker, a number input, a select. The field's own label (its `tooltip`) names the control, a
 * required one says so, and what the server would refuse is said on the control before it is sent
 * (src/core/sharing/field-types.ts has the rules). The answer comes back as `value`.
 */
export function valueForm(field: Field): FormOptions {
  const label = field.tooltip ?? t(`field.${field.kind}` as MessageKey);
  const base = { name: 'value', label, required: field.required };
  const form = (input: FormOptions['inputs'][number]): FormOptions => ({
    title: t('text.title'),
    inputs: [input],
    confirm: t('text.save'),
  });
  switch (field.kind) {
    case 'date': {
      const format = field.dateFormat ?? DEFAULT_DATE_FORMAT;
      const iso = field.text ? isoDateOf(field.text, format) : undefined;
      return form({
        ...base,
        kind: 'date',
        ...(iso ? { value: iso } : {}),
        hint: t('date.hint', { example: formatIsoDate(iso ?? todayIso(), format) }),
        validate: (value, control) =>
          'validity' in control && control.validity.badInput ? t('date.invalid') : undefined,
      });
    }
    case 'number': {
      const rules = field.numberRules ?? {};
      return form({
        ...base,
        kind: 'number',
        ...(field.text ? { value: field.text } : {}),
        ...(rules.min !== undefined ? { min: String(rules.min) } : {}),
        ...(rules.max !== undefined ? { max: String(rules.max) } : {}),
        step: rules.decimals === undefined ? 'any' : String(10 ** -rules.decimals),
        validate: (value, control) => {
          const problem =
            'validity' in control && control.validity.badInput
              ? { key: 'number.invalid' as const }
              : numberProblem(value, rules);
          return problem && t(problem.key, problem.values);
        },
      });
    }
    case 'select':
      return form({ ...base, kind: 'select', options: field.options ?? [], value: field.text ?? '' });
    default:
      // A text field keeps its dialog of before: its tooltip says what to write.
      return {
        ...form({ ...base, label: t('text.label'), kind: 'text', value: field.text ?? '', maxLength: 5000 }),
        ...(field.tooltip ? { intro: field.tooltip } : {}),
      };
  }
}

/** The answer as the sign call sends it: a date in the share's format, anything else as chosen. */
export function answerOf(field: Field, value: string): string {
  return field.kind === 'date' && value
    ? formatIsoDate(value, field.dateFormat ?? DEFAULT_DATE_FORMAT)
    : value;
}

/**
 * The dialog that fills a stamp or an image field: a PNG or JPEG picture (the server decodes it and
 * refuses anything else). The field's own label (its `tooltip`) says what is wanted.
 */
export function pictureForm(field: Field): FormOptions {
  return {
    title: t(field.kind === 'stamp' ? 'picture.stampTitle' : 'picture.imageTitle'),
    ...(field.tooltip ? { intro: field.tooltip } : {}),
    inputs: [
      {
        name: 'picture',
        label: t('picture.label'),
        kind: 'file',
        required: true,
        accept: 'image/png,image/jpeg',
        validate: (_value, control) => {
          const file = 'files' in control ? control.files?.[0] : undefined;
          return file && !['image/png', 'image/jpeg'].includes(file.type) ? t('picture.invalid') : undefined;
        },
      },
    ],
    confirm: t('picture.save'),
  };
}

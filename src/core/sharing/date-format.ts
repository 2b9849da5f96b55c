/**
 * The share's `dateFormat` (spec Share: "dateFormat, timeFormat: string patterns") as date fields use
 * it: the pattern a date answer is written in, and checked against, when the recipient signs.
 *
 * A pattern is made of a day (`d`, `dd`), a month (`M`, `MM`) and a year (`yy`, `yyyy`), each once,
 * between separators that are not letters: `dd.MM.yyyy`, `MM/dd/yyyy`, `yyyy-MM-dd`. `D` and `Y` are
 * read as `d` and `y` (the `DD/MM/YYYY` of moment.js clients). Other letters (month names, weekdays,
 * hours) are refused: the signer's page writes dates with a picker and numbers only.
 *
 * ```ts
 * parseDate('31.12.2025', 'dd.MM.yyyy'); // { year: 2025, month: 12, day: 31 }
 * parseDate('31.02.2025', 'dd.MM.yyyy'); // undefined: no such day
 * ```
 */

/** The pattern of a share without `dateFormat`: ISO 8601's calendar date. */
export const DEFAULT_DATE_FORMAT = 'yyyy-MM-dd';

export interface CalendarDate {
  year: number;
  month: number;
  day: number;
}

type Part = { kind: 'day' | 'month' | 'year'; width: number } | { kind: 'literal'; text: string };

const TOKENS: Record<string, { kind: 'day' | 'month' | 'year'; widths: number[] }> = {
  d: { kind: 'day', widths: [1, 2] },
  M: { kind: 'month', widths: [1, 2] },
  y: { kind: 'year', widths: [2, 4] },
};

/** The parts of a pattern, or why the page could not write dates with it. */
function parts(pattern: string): Part[] | string {
  const found: Part[] = [];
  for (const run of pattern.match(/([A-Za-z])\1*|[^A-Za-z]+/g) ?? []) {
    if (!/^[A-Za-z]/.test(run)) {
      found.push({ kind: 'literal', text: run });
      continue;
    }
    const token = TOKENS[run[0]!.replace('D', 'd').replace('Y', 'y')];
    if (!token || !token.widths.includes(run.length)) {
      return `"${run}" is not a day (d, dd), month (M, MM) or year (yy, yyyy)`;
    }
    if (found.some((p) => p.kind === token.kind)) return `has more than one ${token.kind}`;
    found.push({ kind: token.kind, width: run.length });
  }
  const missing = (['day', 'month', 'year'] as const).find((kind) => !found.some((p) => p.kind === kind));
  return missing ? `has no ${missing}` : found;
}

/** Why a date field could not use `pattern` (undefined: it can). */
export function dateFormatProblem(pattern: string): string | undefined {
  const parsed = parts(pattern);
  return typeof parsed === 'string' ? parsed : undefined;
}

/** The calendar date `text` writes in `pattern`, or undefined when it is not one (31.02 included). */
export function parseDate(text: string, pattern: string): CalendarDate | undefined {
  const parsed = parts(pattern);
  if (typeof parsed === 'string') return undefined;
  const order: ('day' | 'month' | 'year')[] = [];
  const source = parsed
    .map((part) => {
      if (part.kind === 'literal') return part.text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      order.push(part.kind);
      return part.width === 1 ? '(\\d{1,2})' : `(\\d{${part.width}})`;
    })
    .join('');
  const match = new RegExp(`^${source}$`).exec(text.trim());
  if (!match) return undefined;
  const value = (kind: 'day' | 'month' | 'year') => Number(match[order.indexOf(kind) + 1]);
  const shortYear = parsed.some((p) => p.kind === 'year' && p.width === 2);
  const date = { year: value('year') + (shortYear ? 2000 : 0), month: value('month'), day: value('day') };
  const check = new Date(Date.UTC(date.year, date.month - 1, date.day));
  const real =
    check.getUTCFullYear() === date.year &&
    check.getUTCMonth() === date.month - 1 &&
    check.getUTCDate() === date.day;
  return real ? date : undefined;
}

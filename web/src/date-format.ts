/**
 * Dates in the share's `dateFormat`, as the server checks them (src/core/sharing/date-format.ts says
 * the rule; the page cannot import it): day `d`/`dd`, month `M`/`MM`, year `yy`/`yyyy` (`D`, `Y` read
 * as `d`, `y`) between separators. The date picker speaks ISO (`2025-12-31`); the answer is written
 * in the share's pattern (`31.12.2025`).
 */

export const DEFAULT_DATE_FORMAT = 'yyyy-MM-dd';

type Token = { letter: 'd' | 'M' | 'y'; width: number } | { literal: string };

function tokens(pattern: string): Token[] {
  return (pattern.match(/([A-Za-z])\1*|[^A-Za-z]+/g) ?? []).map((run) => {
    const letter = run[0]?.replace('D', 'd').replace('Y', 'y');
    return letter === 'd' || letter === 'M' || letter === 'y'
      ? { letter, width: run.length }
      : { literal: run };
  });
}

/** `2025-12-31` written in `pattern` (`dd.MM.yyyy` → `31.12.2025`). */
export function formatIsoDate(iso: string, pattern: string): string {
  const [year = '', month = '', day = ''] = iso.split('-');
  const parts = { y: year, M: month, d: day };
  return tokens(pattern)
    .map((token) => {
      if ('literal' in token) return token.literal;
      const value = parts[token.letter];
      if (token.letter === 'y') return token.width === 2 ? value.slice(-2) : value;
      return token.width === 1 ? String(Number(value)) : value;
    })
    .join('');
}

/** The ISO date `text` writes in `pattern`, or undefined when it is none (a predefined text may be off). */
export function isoDateOf(text: string, pattern: string): string | undefined {
  const order: ('d' | 'M' | 'y')[] = [];
  const source = tokens(pattern)
    .map((token) => {
      if ('literal' in token) return token.literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      order.push(token.letter);
      return token.width === 1 ? '(\\d{1,2})' : `(\\d{${token.width}})`;
    })
    .join('');
  const match = new RegExp(`^${source}$`).exec(text.trim());
  if (!match) return undefined;
  const part = (letter: 'd' | 'M' | 'y') => match[order.indexOf(letter) + 1] ?? '';
  const year = part('y').length === 2 ? `20${part('y')}` : part('y');
  const iso = `${year}-${part('M').padStart(2, '0')}-${part('d').padStart(2, '0')}`;
  // Only real days: 31.02 is none.
  const date = new Date(`${iso}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(iso) ? iso : undefined;
}

/** Today on the signer's own calendar, as ISO. */
export function todayIso(now = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

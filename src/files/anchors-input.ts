import { ValidationError } from '../base/errors.js';
import { ANCHOR_LIMITS, checkAnchorPattern, type AnchorRequest } from '../pdf/anchors.js';

const OFFSET_KEYS = ['percentX', 'percentY', 'percentWidth', 'percentHeight'] as const;

/**
 * Parses the multipart field `signatureAnchors` of POST /files/saveFile (spec: Anchor request element):
 * a JSON array of `{id, text}` or `{id, regexp}` with an optional Position-shaped `offset` whose values
 * may be negative. An omitted offset is a zero offset (Contract). `regexp` is RE2 syntax, run in linear
 * time; a pattern RE2 cannot run (backreferences, lookaround) is a 400 naming the field. The bounds
 * are `ANCHOR_LIMITS`.
 */
export function parseAnchors(raw: string): AnchorRequest[] {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ValidationError('signatureAnchors', 'must be a JSON array');
  }
  if (!Array.isArray(value)) throw new ValidationError('signatureAnchors', 'must be an array');
  if (value.length > ANCHOR_LIMITS.anchors)
    throw new ValidationError(
      'signatureAnchors',
      `must contain less than or equal to ${ANCHOR_LIMITS.anchors} items`,
    );
  return value.map((item: unknown, i) => {
    const at = `signatureAnchors[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new ValidationError(`${at}`, 'must be of type object');
    const entry = item as Record<string, unknown>;
    for (const key of Object.keys(entry)) {
      if (!['id', 'text', 'regexp', 'offset'].includes(key))
        throw new ValidationError(`${at}.${key}`, 'is not allowed');
    }
    if (typeof entry.id !== 'string' || entry.id === '')
      throw new ValidationError(`${at}.id`, 'must be a string');
    const hasText = typeof entry.text === 'string' && entry.text !== '';
    const hasRegexp = typeof entry.regexp === 'string' && entry.regexp !== '';
    if (hasText === hasRegexp) throw new ValidationError(`${at}`, 'must have exactly one of [text, regexp]');
    if (hasRegexp) {
      const checked = checkAnchorPattern(entry.regexp as string);
      if (typeof checked === 'string') throw new ValidationError(`${at}.regexp`, `${checked}`);
    }
    if (hasText && (entry.text as string).length > ANCHOR_LIMITS.patternLength)
      throw new ValidationError(
        `${at}.text`,
        `length must be less than or equal to ${ANCHOR_LIMITS.patternLength} characters long`,
      );
    const offset: Partial<Record<(typeof OFFSET_KEYS)[number], number>> = {};
    if (entry.offset !== undefined) {
      if (typeof entry.offset !== 'object' || entry.offset === null)
        throw new ValidationError(`${at}.offset`, 'must be of type object');
      for (const [key, v] of Object.entries(entry.offset)) {
        if (!(OFFSET_KEYS as readonly string[]).includes(key))
          throw new ValidationError(`${at}.offset.${key}`, 'is not allowed');
        if (typeof v !== 'number' || !Number.isFinite(v))
          throw new ValidationError(`${at}.offset.${key}`, 'must be a number');
        offset[key as (typeof OFFSET_KEYS)[number]] = v;
      }
    }
    return {
      id: entry.id,
      ...(hasText ? { text: entry.text as string } : { regexp: entry.regexp as string }),
      offset,
    };
  });
}

import { Type } from 'typebox';
import { MAX_SCROLL_TIMEOUT } from './scroll.js';

/** Paging and scrolling as the search and audit-log calls take them. */
export const From = Type.Integer({ minimum: 0, maximum: 100_000, description: '0-based offset.' });
export const Size = (max: number, fallback: number) =>
  Type.Integer({ minimum: 1, maximum: max, description: `Records per answer (default ${fallback}).` });
export const Scroll = Type.Object(
  {
    timeout: Type.Optional(
      Type.Number({
        minimum: 1,
        maximum: MAX_SCROLL_TIMEOUT,
        description: `Seconds the scroll context stays open, a number from 1 to ${MAX_SCROLL_TIMEOUT} (fractions count to the millisecond: 1.5 is 1500 ms; 400 outside the bounds); enables scrolling. Refreshed by each request.`,
      }),
    ),
    id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'The latest `scrollId`, to continue.' }),
    ),
  },
  { additionalProperties: false },
);

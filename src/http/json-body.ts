import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../base/errors.js';

/**
 * How deeply a JSON body may nest objects and arrays. No request of the API needs more than a
 * handful of levels; a deeper body is refused before it is parsed, as everything after the parser
 * (serializing, storing, walking the body) recurses and a 10 MiB body can nest two million levels.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether a JSON text nests objects and arrays deeper than `max`: one pass, strings skipped. */
export function exceedsDepth(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      // A backslash escapes the character after it.
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** application/json bodies: Fastify's own parser (prototype-poisoning checks), behind a depth bound. */
export function registerJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string; // parseAs: 'string'
    // An empty body declared as JSON is an absent body (http/validation.ts treatAbsentBodyAsEmpty).
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    if (exceedsDepth(text, MAX_JSON_DEPTH)) {
      done(new ValidationError(`Request body nests more than ${MAX_JSON_DEPTH} levels`), undefined);
      return;
    }
    void parse(request, text, done);
  });
}

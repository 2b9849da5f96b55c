import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { ValidationError } from '../base/errors.js';

// ajv-formats is CommonJS with its function on `default`.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export type HttpPart = 'body' | 'querystring' | 'params' | 'headers';

/**
 * Two Ajv instances: bodies are JSON and keep their types (a string where a number belongs is an
 * error, as an integrator expects); query strings, paths and headers are text and get coerced.
 * `removeAdditional` stays off so unknown keys are rejected, not silently dropped (DESIGN: Stack).
 */
export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const common = { allErrors: false, removeAdditional: false, useDefaults: true, strict: false } as const;
  const body = addFormats(new Ajv({ ...common, coerceTypes: false }));
  const text = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));
  return ({ schema, httpPart }) => {
    const validate: ValidateFunction = (httpPart === 'body' ? body : text).compile(schema as object);
    const flags = httpPart === 'querystring' ? booleanProperties(schema) : [];
    return (data: unknown) => {
      if (flags.length > 0) acceptDigitBooleans(data, flags);
      return validate(data) ? { value: data } : { error: validationFailure(validate.errors) };
    };
  };
}

/** The names of an object schema's properties that are booleans (`type: 'boolean'`). */
function booleanProperties(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.keys(properties).filter((name) => properties[name]?.type === 'boolean');
}

/**
 * Query flags are text, and integrators write them as `1`/`0` as often as `true`/`false`
 * (`?hardDelete=1`); Ajv coerces only the words, so the digits are turned into them first.
 */
function acceptDigitBooleans(query: unknown, flags: string[]): void {
  if (typeof query !== 'object' || query === null) return;
  const values = query as Record<string, unknown>;
  for (const flag of flags) {
    if (values[flag] === '1') values[flag] = 'true';
    else if (values[flag] === '0') values[flag] = 'false';
  }
}

function validationFailure(errors: ErrorObject[] | null | undefined): Error & { validation: ErrorObject[] } {
  return Object.assign(new Error('validation failed'), { validation: errors ?? [] });
}

const PART_LABEL: Record<HttpPart, string> = {
  body: 'BODY',
  querystring: 'QUERY',
  params: 'PARAMS',
  headers: 'HEADERS',
};

/**
 * The spec's validation text (Errors, point 2), in Joi's words:
 * `Request validation errors: BODY ERRORS: "signatures[0].position.percentX" must be less than or equal to 1`.
 */
export function validationMessage(part: string | undefined, errors: ErrorObject[]): string {
  const label = PART_LABEL[(part ?? 'body') as HttpPart] ?? 'BODY';
  return `Request validation errors: ${label} ERRORS: ${describe(pickError(errors))}`;
}

// With allErrors off Ajv stops at the first failing keyword, but a failing anyOf/oneOf is reported
// after the errors of each of its branches. When the input has the type of exactly one branch (an
// object where "one object or an array of them" is allowed), that branch's error says what to fix;
// otherwise the union's own error does.
function pickError(errors: ErrorObject[]): ErrorObject | undefined {
  const union = errors.at(-1);
  if (!union || (union.keyword !== 'anyOf' && union.keyword !== 'oneOf')) return errors[0];
  const branchOf = (e: ErrorObject) => e.schemaPath.slice(union.schemaPath.length + 1).split('/')[0];
  const typeMisses = new Set(
    errors.filter((e) => e.keyword === 'type' && e.instancePath === union.instancePath).map(branchOf),
  );
  const fitting = errors.slice(0, -1).filter((e) => !typeMisses.has(branchOf(e)));
  const branches = new Set(fitting.map(branchOf));
  return branches.size === 1 ? fitting[0] : union;
}

/** `/signatures/0/position/percentX` → `signatures[0].position.percentX`. */
export function joiPath(instancePath: string, child?: string): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) segments.push(child);
  let path = '';
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) path += `[${segment}]`;
    else path += path === '' ? segment : `.${segment}`;
  }
  return path === '' ? 'value' : path;
}

const TYPE_TEXT: Record<string, string> = {
  string: 'must be a string',
  number: 'must be a number',
  integer: 'must be an integer',
  boolean: 'must be a boolean',
  array: 'must be an array',
  object: 'must be of type object',
  null: 'must be null',
};

function describe(error: ErrorObject | undefined): string {
  if (!error) return '"value" is invalid';
  const params = error.params as Record<string, unknown>;
  const at = (child?: string) => `"${joiPath(error.instancePath, child)}"`;
  switch (error.keyword) {
    case 'required':
      return `${at(String(params.missingProperty))} is required`;
    case 'additionalProperties':
      return `${at(String(params.additionalProperty))} is not allowed`;
    case 'type': {
      const types = String(params.type).split(',');
      const first = types.find((t) => t !== 'null') ?? 'null';
      return `${at()} ${TYPE_TEXT[first] ?? `must be of type ${first}`}`;
    }
    case 'maximum':
      return `${at()} must be less than or equal to ${String(params.limit)}`;
    case 'minimum':
      return `${at()} must be greater than or equal to ${String(params.limit)}`;
    case 'exclusiveMaximum':
      return `${at()} must be less than ${String(params.limit)}`;
    case 'exclusiveMinimum':
      return `${at()} must be greater than ${String(params.limit)}`;
    case 'minLength':
      return params.limit === 1
        ? `${at()} is not allowed to be empty`
        : `${at()} length must be at least ${String(params.limit)} characters long`;
    case 'maxLength':
      return `${at()} length must be less than or equal to ${String(params.limit)} characters long`;
    case 'minItems':
      return `${at()} must contain at least ${String(params.limit)} items`;
    case 'maxItems':
      return `${at()} must contain less than or equal to ${String(params.limit)} items`;
    case 'uniqueItems':
      return `${at()} contains a duplicate value`;
    case 'enum':
      return `${at()} must be one of [${(params.allowedValues as unknown[]).map(String).join(', ')}]`;
    case 'const':
      return `${at()} must be [${String(params.allowedValue)}]`;
    case 'format':
      return `${at()} ${formatText(String(params.format))}`;
    case 'pattern':
      return `${at()} fails to match the required pattern: /${String(params.pattern)}/`;
    case 'minProperties':
      return `${at()} must have at least ${String(params.limit)} keys`;
    case 'maxProperties':
      return `${at()} must have less than or equal to ${String(params.limit)} keys`;
    case 'anyOf':
    case 'oneOf':
      return `${at()} does not match any of the allowed types`;
    default:
      return `${at()} is invalid`;
  }
}

function formatText(format: string): string {
  switch (format) {
    case 'email':
      return 'must be a valid email';
    case 'date-time':
    case 'date':
      return 'must be in ISO 8601 date format';
    case 'uri':
    case 'url':
      return 'must be a valid uri';
    case 'uuid':
      return 'must be a valid GUID';
    default:
      return `must be a valid ${format}`;
  }
}

/**
 * The NUL character is refused in every text a request carries (path, query, JSON keys and values):
 * PostgreSQL's text and JSONB cannot hold it (a 500 there, stored as is on SQLite), and no field of
 * the API has a use for it. Checked for every route, whatever its schema says.
 */
export function refuseNulCharacters(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const parts: [HttpPart, unknown][] = [
      ['params', request.params],
      ['querystring', request.query],
      ['body', request.body],
    ];
    for (const [part, value] of parts) assertNoNul(part, value);
  });
}

/** Throws the spec's validation error naming the first string or key of `value` that holds U+0000. */
export function assertNoNul(part: HttpPart, value: unknown): void {
  const at = nulAt(value, '');
  if (at !== undefined)
    throw new ValidationError(at || 'value', 'must not contain the NUL character', { part });
}

/** The path (Joi style) of the first string or key holding U+0000 in `value`, if any. */
function nulAt(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = nulAt(item, `${path}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Buffer.isBuffer(value)) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return at;
    const found = nulAt(item, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * A request without a body (a DELETE, a POST from a client that sends nothing, an empty
 * text/plain body) means "no fields": where the route's body schema is an object, it is validated
 * and handled as `{}`. A body whose fields are all optional is then accepted (defaults apply)
 * instead of failing with `"value" must be of type object`; otherwise the error names the first
 * required field.
 */
export function treatAbsentBodyAsEmpty(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const absent =
      request.body === undefined || (typeof request.body === 'string' && request.body.trim() === '');
    if (!absent) return;
    const schema = request.routeOptions.schema?.body as { type?: unknown } | undefined;
    if (schema?.type === 'object') request.body = {};
  });
}

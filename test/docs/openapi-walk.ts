import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with its function on `default`.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The parts of an OpenAPI 3.1 document these tests read. JSON Schema is walked generically. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonSchema = Record<string, any>;

export interface MediaType {
  schema?: JsonSchema;
  example?: unknown;
  examples?: Record<string, { value?: unknown }>;
}

export interface Operation {
  operationId?: string;
  tags?: string[];
  parameters?: { name: string; in: string; [key: string]: unknown }[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  requestBody?: { required?: boolean; content?: Record<string, MediaType> };
  responses?: Record<
    string,
    { description?: string; content?: Record<string, MediaType>; headers?: Record<string, unknown> }
  >;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  tags?: { name: string; description?: string }[];
  components?: {
    schemas?: Record<string, JsonSchema>;
    headers?: Record<string, { description?: string; schema?: JsonSchema }>;
    securitySchemes?: Record<string, { type: string; scheme?: string; in?: string; name?: string }>;
  };
  security?: Record<string, string[]>[];
}

export interface NamedOperation {
  /** `METHOD /path`, as the document spells the path. */
  key: string;
  operation: Operation;
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);

export function operationsOf(document: OpenApiDocument): NamedOperation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => ({ key: `${method.toUpperCase()} ${path}`, operation })),
  );
}

/** The example values of a media type: `example`, or each of `examples`. */
export function examplesOf(media: MediaType): unknown[] {
  if (media.example !== undefined) return [media.example];
  return Object.values(media.examples ?? {}).map((example) => example.value);
}

/** Bytes (a PDF, an image, a ZIP) have no example value worth showing: their media type says it. */
function isBinary(schema: JsonSchema | undefined): boolean {
  return schema?.type === 'string' && schema.format === 'binary';
}

/**
 * Validates values against the document's schemas (JSON Schema 2020-12, as OpenAPI 3.1 writes them),
 * `#/components/...` references included.
 */
export function schemaValidator(document: OpenApiDocument): (schema: JsonSchema, value: unknown) => string[] {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  ajv.addFormat('binary', true);
  ajv.addSchema({ $id: 'openapi', components: document.components ?? {} });
  const compiled = new WeakMap<JsonSchema, ReturnType<Ajv2020['compile']>>();
  return (schema, value) => {
    let validate = compiled.get(schema);
    if (!validate) {
      const anchored = JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'),
      );
      validate = ajv.compile(anchored);
      compiled.set(schema, validate);
    }
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? e.keyword}`);
  };
}

/**
 * What is wrong with an operation's examples: a request body or a 2xx answer without one (bytes
 * excepted), or an example its own schema refuses.
 */
export function exampleProblems(
  validate: ReturnType<typeof schemaValidator>,
  { key, operation }: NamedOperation,
): string[] {
  const problems: string[] = [];
  const check = (where: string, media: MediaType): void => {
    if (isBinary(media.schema)) return;
    const examples = examplesOf(media);
    if (examples.length === 0) problems.push(`${key}: ${where} has no example`);
    for (const example of examples) {
      for (const error of validate(media.schema ?? {}, example))
        problems.push(`${key}: ${where} example does not fit its schema: ${error}`);
    }
  };
  for (const [type, media] of Object.entries(operation.requestBody?.content ?? {}))
    check(`request ${type}`, media);
  const success = Object.entries(operation.responses ?? {}).filter(([status]) => /^2/.test(status));
  for (const [status, answer] of success)
    for (const [type, media] of Object.entries(answer.content ?? {})) check(`${status} ${type}`, media);
  return problems;
}

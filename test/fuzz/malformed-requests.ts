import fc from 'fast-check';
import type { HostilePdf } from './hostile-pdfs.js';
import type { Route, Schema } from './openapi-routes.js';

/**
 * fast-check arbitraries of malformed requests to one route: a value that is almost what the schema
 * wants and then broken (wrong type, missing or extra field, huge value, deep nesting), bad
 * encodings in path, query and body, bad multipart and hostile PDFs. Secrets put into a request
 * (tokens, passwords, keys) are distinct markers, so an answer that repeats one is found by search.
 */

export type Caller = 'admin' | 'user' | 'none' | 'bogus';

/** A request before the callers' tokens are known: `build` turns it into bytes on the wire. */
export interface FuzzCase {
  family: string;
  caller: Caller;
  tokenIn: 'query' | 'bearer' | 'cookie';
  pathValues: string[];
  /** Extra query text (already encoded, or deliberately badly encoded), without `?`. */
  query: string;
  contentType: string | undefined;
  body: Buffer | undefined;
  /** Secret values the request carries (besides the token): none may come back. */
  secrets: string[];
}

/** Keys whose string values are secrets: a request's value under these never comes back. */
export const SECRET_KEY = /pass|secret|otp|token|recovery|pin|apikey|code$/i;

const marker = fc.stringMatching(/^[0-9a-f]{16}$/).map((hex) => `Zq${hex}`);

const BAD_SEGMENTS = [
  '%E0%A4%A',
  '%',
  '%ZZ',
  '%C0%AF',
  '%00',
  '%FF%FE',
  '%ED%A0%80',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e',
  '%F0%9F%98',
  '-1',
  '0',
  '99999999999999999999',
  '1e309',
  'NaN',
  'null',
  '__proto__',
  'constructor',
  '%22%3E%3Cscript%3E',
];

const INTERESTING_KEYS = [
  'password',
  'hmacSecret',
  'otp',
  'recoveryCode',
  '__proto__',
  'constructor',
  'prototype',
  '$where',
  'foo',
];

/** Any value at all, of any JSON type (the wrong type for most places). */
const wrongType = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 20 }),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.integer(), { maxLength: 3 }),
);

const hugeValue = fc.oneof(
  fc.integer({ min: 1000, max: 200_000 }).map((n) => 'a'.repeat(n)),
  fc.constantFrom(1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -0, 2 ** 31, 2 ** 63),
  fc.integer({ min: 1000, max: 20_000 }).map((n) => Array.from({ length: n }, (_, i) => i)),
  fc.integer({ min: 50, max: 2000 }).map((n) => {
    let v: unknown = 'x';
    for (let i = 0; i < n; i++) v = { a: v };
    return v;
  }),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
);

/** A value that satisfies `schema` as far as a quick reading goes (enough to get past most checks). */
export function validish(schema: Schema | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.constant(null);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants) && variants.length > 0)
    return fc.oneof(...variants.map((v: Schema) => validish(v, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'string':
      if (schema.format === 'email') return fc.constant('someone@example.org');
      if (schema.format === 'date-time') return fc.constant(new Date(0).toISOString());
      return fc.string({
        minLength: Math.min(schema.minLength ?? 0, 50),
        maxLength: Math.max(Math.min(schema.maxLength ?? 12, 12), Math.min(schema.minLength ?? 0, 50)),
      });
    case 'integer':
      return fc.integer({
        min: schema.minimum ?? 0,
        max: Math.max(schema.minimum ?? 0, Math.min(schema.maximum ?? 10, 1_000_000)),
      });
    case 'number':
      return fc.double({
        min: schema.minimum ?? 0,
        max: schema.maximum ?? Math.max(schema.minimum ?? 0, 1),
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(validish(schema.items, depth + 1), {
        minLength: Math.min(schema.minItems ?? 0, 3),
        maxLength: Math.max(Math.min(schema.minItems ?? 0, 3), 2),
      });
    case 'object':
    default: {
      const properties: Record<string, Schema> = schema.properties ?? {};
      const required = new Set<string>(schema.required ?? []);
      const entries = Object.entries(properties);
      if (entries.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), wrongType, { maxKeys: 3 });
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, sub] of entries) record[key] = validish(sub, depth + 1);
      return fc.record(record, {
        requiredKeys: entries.map(([key]) => key).filter((key) => required.has(key)),
      });
    }
  }
}

export type Mutation = 'wrongType' | 'remove' | 'extra' | 'huge';

/** Breaks one node of `value` (chosen by `pick`) in the way `mutation` says. */
export function mutate(
  value: unknown,
  pick: number,
  mutation: Mutation,
  replacement: unknown,
  key: string,
): unknown {
  const nodes: { parent: Record<string, unknown> | unknown[]; key: string | number }[] = [];
  const walk = (node: unknown) => {
    if (Array.isArray(node))
      node.forEach((child, i) => {
        nodes.push({ parent: node, key: i });
        walk(child);
      });
    else if (node && typeof node === 'object')
      for (const [k, child] of Object.entries(node)) {
        nodes.push({ parent: node as Record<string, unknown>, key: k });
        walk(child);
      }
  };
  const root = { root: value };
  walk(root);
  const target = nodes[pick % nodes.length]!;
  const parent = target.parent as Record<string | number, unknown>;
  switch (mutation) {
    case 'remove':
      if (Array.isArray(parent)) parent.splice(Number(target.key), 1);
      else if (target.key !== 'root') delete parent[target.key];
      break;
    case 'extra': {
      // An own member, even named `__proto__` (an assignment would set the prototype and never be sent).
      const add = (holder: object) =>
        Object.defineProperty(holder, key, {
          value: replacement,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      const holder = parent[target.key];
      if (holder && typeof holder === 'object' && !Array.isArray(holder)) add(holder);
      else if (!Array.isArray(parent)) add(parent);
      break;
    }
    default:
      parent[target.key] = replacement;
  }
  return root.root;
}

/** Replaces secret-named string values by markers and returns the markers used. */
function plantSecrets(value: unknown, markers: string[]): { value: unknown; secrets: string[] } {
  const secrets: string[] = [];
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (!node || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(node)) {
      if (SECRET_KEY.test(key) && (typeof child === 'string' || child === undefined)) {
        const secret = markers[secrets.length % markers.length]! + secrets.length;
        secrets.push(secret);
        out[key] = secret;
      } else out[key] = walk(child);
    }
    return out;
  };
  return { value: walk(value), secrets };
}

function jsonBody(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value) ?? 'null', 'utf8');
}

/** Bodies that are not JSON, or JSON no parser should be made to suffer. */
const badJsonBodies: fc.Arbitrary<{ family: string; contentType: string; body: Buffer }> = fc.oneof(
  fc.constantFrom(
    { family: 'invalid JSON', contentType: 'application/json', body: Buffer.from('{"a":') },
    { family: 'empty JSON body', contentType: 'application/json', body: Buffer.alloc(0) },
    {
      family: 'invalid UTF-8 in JSON',
      contentType: 'application/json',
      body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0xfe, 0x22, 0x7d]),
    },
    {
      family: 'JSON with a BOM',
      contentType: 'application/json',
      body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{}')]),
    },
    {
      family: 'JSON as latin1 charset',
      contentType: 'application/json; charset=latin1',
      body: Buffer.from('{"name":"\xe9"}', 'latin1'),
    },
    {
      family: 'arrays nested 100000 deep',
      contentType: 'application/json',
      body: Buffer.from('['.repeat(100_000) + ']'.repeat(100_000)),
    },
    {
      family: 'objects nested 20000 deep',
      contentType: 'application/json',
      body: Buffer.from('{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000)),
    },
    {
      family: 'body over the 10 MiB limit',
      contentType: 'application/json',
      body: Buffer.from(`{"a":"${'x'.repeat(10 * 1024 * 1024 + 10)}"}`),
    },
    { family: 'number beyond double', contentType: 'application/json', body: Buffer.from('{"a":1e400}') },
    { family: 'text/plain body', contentType: 'text/plain', body: Buffer.from('hello') },
    { family: 'unknown media type', contentType: 'application/x-fuzz', body: Buffer.from('<x/>') },
    { family: 'xml body', contentType: 'application/xml', body: Buffer.from('<?xml version="1.0"?><a/>') },
    {
      family: 'form-urlencoded body',
      contentType: 'application/x-www-form-urlencoded',
      body: Buffer.from('a=%ZZ&b'),
    },
  ),
  fc.jsonValue({ maxDepth: 3 }).map((v) => ({
    family: 'arbitrary JSON',
    contentType: 'application/json',
    body: jsonBody(v),
  })),
);

interface Part {
  name: string;
  filename?: string;
  type?: string;
  data: Buffer;
}

export function multipartBody(boundary: string, parts: Part[], close = true): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    chunks.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ''}\r\n`,
        'latin1',
      ),
      part.data,
      Buffer.from('\r\n'),
    );
  }
  if (close) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

const ANCHORS = [
  '[{"id":"a1","text":"SIGN_HERE_1"}]',
  '[{"id":"a1","regexp":"SIGN_HERE_\\\\d"}]',
  '[{"id":"a1","regexp":"("}]',
  '[{"id":"a1","regexp":"[z-a]"}]',
  '[{"id":"a1","text":""}]',
  '{"id":"a1"}',
  'not json',
  '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]',
  JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ id: `a${i}`, text: 'a' }))),
];

/** Multipart requests gone wrong, and well-formed ones carrying hostile files. */
function multipartCases(pdfs: HostilePdf[]) {
  const boundary = 'fuzzBoundary7MA4YWxkTrZu0gW';
  const pdf = fc.constantFrom(...pdfs);
  const fields = fc.record({
    fileName: fc.oneof(fc.constant('doc.pdf'), fc.string({ maxLength: 300 }), fc.constant('..\\..\\x.pdf')),
    signatureAnchors: fc.constantFrom(...ANCHORS),
    sessionId: fc.oneof(fc.uuid(), fc.string({ maxLength: 30 })),
  });
  const wellFormed = fc
    .tuple(pdf, fields, fc.constantFrom('application/pdf', 'image/png', 'application/octet-stream', ''))
    .map(([file, f, type]) => ({
      family: `hostile file: ${file.name}`,
      contentType: `multipart/form-data; boundary=${boundary}`,
      body: multipartBody(boundary, [
        { name: 'fileName', data: Buffer.from(f.fileName) },
        { name: 'signatureAnchors', data: Buffer.from(f.signatureAnchors) },
        { name: 'sessionId', data: Buffer.from(f.sessionId) },
        { name: 'file', filename: 'x.pdf', type: type || undefined, data: file.bytes },
      ]),
    }));
  const small = (name = 'file') => ({
    name,
    filename: 'a.pdf',
    type: 'application/pdf',
    data: pdfs[0]!.bytes,
  });
  return fc.oneof(
    { weight: 3, arbitrary: wellFormed },
    fc.constantFrom(
      {
        family: 'multipart without boundary',
        contentType: 'multipart/form-data',
        body: multipartBody(boundary, [small()]),
      },
      {
        family: 'multipart with an empty boundary',
        contentType: 'multipart/form-data; boundary=',
        body: multipartBody(boundary, [small()]),
      },
      {
        family: 'multipart boundary not in the body',
        contentType: 'multipart/form-data; boundary=other',
        body: multipartBody(boundary, [small()]),
      },
      {
        family: 'multipart, empty body',
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: Buffer.alloc(0),
      },
      {
        family: 'multipart without the closing boundary',
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: multipartBody(boundary, [small()], false),
      },
      {
        family: 'multipart with 2000 parts',
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: multipartBody(
          boundary,
          Array.from({ length: 2000 }, (_, i) => ({ name: `f${i}`, data: Buffer.from('x') })),
        ),
      },
      {
        family: 'multipart with two files',
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: multipartBody(boundary, [small(), small()]),
      },
      {
        family: 'multipart file in another field',
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: multipartBody(boundary, [small('upload')]),
      },
      {
        family: 'multipart field over 1 MiB',
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: multipartBody(boundary, [{ name: 'fileName', data: Buffer.alloc(1_200_000, 'a') }, small()]),
      },
      {
        family: 'multipart field named __proto__',
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: multipartBody(boundary, [{ name: '__proto__', data: Buffer.from('x') }, small()]),
      },
      {
        family: 'multipart with invalid UTF-8 names',
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: multipartBody(boundary, [
          { name: '\xff\xfe', data: Buffer.from([0xc3, 0x28]) },
          { ...small(), filename: '\xc3\x28.pdf' },
        ]),
      },
      {
        family: 'multipart part without headers',
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: Buffer.from(`--${boundary}\r\n\r\nhello\r\n--${boundary}--\r\n`),
      },
    ),
    fc.tuple(fc.nat(), fc.constantFrom(...pdfs.slice(0, 3))).map(([cut, file]) => {
      const whole = multipartBody(boundary, [small(), { ...small(), data: file.bytes }]);
      return {
        family: 'multipart truncated at a random byte',
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: whole.subarray(0, cut % whole.length),
      };
    }),
    fc.constant({
      family: 'JSON to a multipart route',
      contentType: 'application/json',
      body: Buffer.from('{}'),
    }),
  );
}

/** Encoded path values: real ids, random text, bad percent-encodings and very long segments. */
function pathValue(known: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...known) },
    fc.uuid(),
    fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => encodeURIComponent(s) || 'x'),
    { weight: 2, arbitrary: fc.constantFrom(...BAD_SEGMENTS) },
    fc.integer({ min: 400, max: 20_000 }).map((n) => 'x'.repeat(n)),
  );
}

/** Extra query text: wrong types for the route's parameters, unknown keys, bad encodings, a huge string. */
function queryText(
  route: Route,
  markers: fc.Arbitrary<string>,
): fc.Arbitrary<{ text: string; secrets: string[] }> {
  const names = [...route.queryParams.map((p) => p.name), 'token', 'foo', '__proto__[x]', 'a[b][c]'];
  const pair = fc.tuple(
    fc.constantFrom(...names),
    fc.oneof(
      fc.string({ maxLength: 10 }).map(encodeURIComponent),
      fc.constantFrom('true', 'false', '-1', '1e999', 'null', '', '[]', '%E0%A4%A', '%', '%00'),
      markers,
    ),
  );
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant({ text: '', secrets: [] as string[] }) },
    {
      weight: 4,
      arbitrary: fc.array(pair, { maxLength: 4 }).map((pairs) => ({
        text: pairs.map(([k, v]) => `${k}=${v}`).join('&'),
        secrets: pairs
          .filter(([k]) => SECRET_KEY.test(k))
          .map(([, v]) => v)
          .filter((v) => v.startsWith('Zq')),
      })),
    },
    fc.integer({ min: 9000, max: 70_000 }).map((n) => ({ text: `foo=${'q'.repeat(n)}`, secrets: [] })),
  );
}

/** Every malformed request this suite sends to `route`. */
export function fuzzCases(route: Route, known: string[], pdfs: HostilePdf[]): fc.Arbitrary<FuzzCase> {
  const caller = fc.constantFrom<Caller>('admin', 'admin', 'user', 'user', 'none', 'bogus');
  const tokenIn = fc.constantFrom<FuzzCase['tokenIn']>('query', 'query', 'bearer', 'cookie');
  const markers = fc.array(marker, { minLength: 1, maxLength: 3 });
  const pathValues = fc.tuple(...route.pathParams.map(() => pathValue(known)));

  type BodyPick = {
    family: string;
    contentType: string | undefined;
    body: Buffer | undefined;
    secrets: string[];
  };
  let body: fc.Arbitrary<BodyPick>;
  if (route.body) {
    const schema = route.body;
    const mutated = fc
      .tuple(
        validish(schema),
        fc.nat(),
        fc.constantFrom<Mutation>('wrongType', 'remove', 'extra', 'huge'),
        fc.oneof(wrongType, hugeValue),
        fc.constantFrom(...INTERESTING_KEYS),
      )
      .map(([value, pick, mutation, replacement, key]) => ({
        family: `JSON body, ${mutation}`,
        value: mutate(value, pick, mutation, mutation === 'huge' ? replacement : replacement, key),
      }));
    const json = fc
      .tuple(
        fc.oneof(
          {
            weight: 2,
            arbitrary: validish(schema).map((value) => ({ family: 'schema-shaped JSON body', value })),
          },
          { weight: 5, arbitrary: mutated },
        ),
        markers,
      )
      .map(([{ family, value }, m]) => {
        const planted = plantSecrets(value, m);
        return {
          family,
          contentType: 'application/json',
          body: jsonBody(planted.value),
          secrets: planted.secrets,
        };
      });
    body = fc.oneof(
      { weight: 6, arbitrary: json },
      { weight: 2, arbitrary: badJsonBodies.map((b) => ({ ...b, secrets: [] })) },
      { weight: 1, arbitrary: multipartCases(pdfs).map((b) => ({ ...b, secrets: [] })) },
    );
  } else if (route.method === 'POST' || route.method === 'PUT') {
    body = fc.oneof(
      { weight: 6, arbitrary: multipartCases(pdfs).map((b) => ({ ...b, secrets: [] })) },
      { weight: 1, arbitrary: badJsonBodies.map((b) => ({ ...b, secrets: [] })) },
    );
  } else {
    body = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.constant<BodyPick>({
          family: 'no body',
          contentType: undefined,
          body: undefined,
          secrets: [],
        }),
      },
      { weight: 1, arbitrary: badJsonBodies.map((b) => ({ ...b, secrets: [] })) },
    );
  }

  return fc
    .tuple(caller, tokenIn, pathValues, queryText(route, marker), body)
    .map(([who, where, values, query, picked]) => ({
      family: picked.family,
      caller: who,
      tokenIn: where,
      pathValues: values,
      query: query.text,
      contentType: picked.contentType,
      body: picked.body,
      secrets: [...picked.secrets, ...query.secrets],
    }));
}

/** `value` with a secret planted in every object at every depth (spec: PUT /configuration restrictions). */
function withSecretsEverywhere(value: unknown, secret: string): { value: unknown; secrets: string[] } {
  const secrets: string[] = [];
  // Not at the root, where an unknown key only gets the whole body refused.
  const walk = (node: unknown, depth: number): unknown => {
    if (Array.isArray(node)) return node.map((child) => walk(child, depth + 1));
    if (!node || typeof node !== 'object') return node;
    const out: Record<string, unknown> = {};
    if (depth > 0) {
      const planted = `${secret}${secrets.length}`;
      secrets.push(planted);
      out.password = planted;
      out.hmacSecret = planted;
    }
    for (const [key, child] of Object.entries(node)) out[key] = walk(child, depth + 1);
    return out;
  };
  return { value: walk(value, 0), secrets };
}

/** `value` with a NUL in every string (PostgreSQL refuses NUL in text: it must be a 4xx, not a 500). */
export function withNul(value: unknown): unknown {
  if (typeof value === 'string') return `${value}\u0000x`;
  if (Array.isArray(value)) return value.map(withNul);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withNul(v)]));
  return value;
}

/** The fixed cases every route gets besides the random ones (the holes the issue reports). */
export function fixedCases(route: Route, known: string[], pdfs: HostilePdf[], seed = 1): FuzzCase[] {
  const base = {
    caller: 'admin' as const,
    tokenIn: 'query' as const,
    pathValues: route.pathParams.map((_, i) => known[i % known.length]!),
    query: '',
    contentType: undefined,
    body: undefined,
    secrets: [],
  };
  const cases: FuzzCase[] = [
    { ...base, family: 'bad percent-encoding in the query', query: 'x=%E0%A4%A' },
    { ...base, family: 'query string of 64 KiB', query: `foo=${'q'.repeat(64 * 1024)}` },
  ];
  if (route.body) {
    const [shaped] = fc.sample(validish(route.body), { seed, numRuns: 1 });
    const planted = withSecretsEverywhere(shaped, `ZqPlanted${(seed >>> 0).toString(16)}n`);
    cases.push({
      ...base,
      caller: 'user',
      family: 'a password in every object of a schema-shaped body',
      contentType: 'application/json',
      body: jsonBody(planted.value),
      secrets: planted.secrets,
    });
  }
  if (route.body) {
    // PostgreSQL refuses NUL in text: a string with one must be a 400, never reach a query as is.
    const [shaped] = fc.sample(validish(route.body), { seed: seed + 1, numRuns: 1 });
    cases.push({
      ...base,
      family: 'NUL characters in every string of a schema-shaped body',
      contentType: 'application/json',
      body: jsonBody(withNul(shaped)),
    });
  }
  if (route.pathParams.length > 0)
    cases.push({ ...base, family: 'NUL in the path', pathValues: route.pathParams.map(() => 'a%00b') });
  if (route.pathParams.length > 0)
    cases.push({
      ...base,
      family: 'bad percent-encoding in the path',
      pathValues: route.pathParams.map(() => '%E0%A4%A'),
    });
  if (!route.body && (route.method === 'POST' || route.method === 'PUT')) {
    const boundary = 'fixedBoundary';
    const withFile = (file: Buffer) =>
      multipartBody(boundary, [
        { name: 'signatureAnchors', data: Buffer.from(ANCHORS[0]!) },
        { name: 'file', filename: 'x.pdf', type: 'application/pdf', data: file },
      ]);
    cases.push(
      {
        ...base,
        family: 'multipart without boundary',
        contentType: 'multipart/form-data',
        body: withFile(pdfs[0]!.bytes),
      },
      {
        ...base,
        family: 'multipart without the closing boundary',
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: withFile(pdfs[0]!.bytes).subarray(0, 200),
      },
      ...pdfs.map((pdf) => ({
        ...base,
        family: `hostile file: ${pdf.name}`,
        contentType: `multipart/form-data; boundary=${boundary}`,
        body: withFile(pdf.bytes),
      })),
    );
  }
  return cases;
}

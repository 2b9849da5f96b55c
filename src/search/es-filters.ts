import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import { ValidationError } from '../base/errors.js';
import type { Database } from '../store/db/schema.js';

/**
 * `esFilters` (spec: Reports; DESIGN: an Elasticsearch bool query) translated to SQL. Every value
 * travels as a bound parameter and every field maps through a fixed table to a column: nothing of the
 * input is ever spliced into SQL text.
 *
 * Forms: `bool` (`filter`, `must`, `should`, `must_not`, `minimum_should_match` 0 or 1), `term`,
 * `terms`, `range` (`gt`, `gte`, `lt`, `lte`), `exists`, `match` (case-insensitive substring),
 * `match_all`, and `nested` with a `path`. A bare `{filter:[…]}` is read as `{bool:{filter:[…]}}`.
 *
 * ```ts
 * const where = esFilterExpression({ bool: { filter: [{ term: { 'workflow.shareStateName': 'completed' } }] } });
 * db.selectFrom('documents').where((eb) => where(eb));
 * ```
 */

type Eb = ExpressionBuilder<Database, 'documents'>;
type Predicate = (eb: Eb) => Expression<SqlBool>;

interface FieldSpec {
  /** The document-level column, or a correlated subquery for fields of other tables. */
  kind: 'text' | 'number' | 'boolean' | 'time';
  column: (eb: Eb) => Expression<unknown>;
  /**
   * For a user's login name: the document column holding the user id. `term` and `terms` then look
   * the users up once (`created_by IN (SELECT id FROM users WHERE name = ? OR id = ?)`), by login
   * name or id, instead of per row.
   */
  userIdColumn?: 'created_by' | 'owner_id';
  /** Nested path the field belongs to (`createName`, `workflow`, `shares`, ...). */
  path?: string;
}

const column =
  (name: keyof Database['documents']) =>
  (eb: Eb): Expression<unknown> =>
    eb.ref(`documents.${name}`);

const userName =
  (key: 'created_by' | 'owner_id') =>
  (eb: Eb): Expression<unknown> =>
    eb.selectFrom('users').select('users.name').whereRef('users.id', '=', `documents.${key}`).limit(1);

/** Document fields as the report record names them. */
const DOCUMENT_FIELDS: Record<string, FieldSpec> = {
  documentId: { kind: 'text', column: column('id') },
  documentTitle: { kind: 'text', column: column('title') },
  documentType: { kind: 'text', column: column('document_type') },
  definitionType: { kind: 'text', column: column('definition_type') },
  owner: { kind: 'text', column: userName('owner_id'), userIdColumn: 'owner_id' },
  organization: { kind: 'text', column: column('organization_id') },
  folderId: { kind: 'text', column: column('folder_id') },
  isSigned: { kind: 'boolean', column: column('is_signed') },
  _version: { kind: 'number', column: column('version') },
  createDate: { kind: 'time', column: column('created_at') },
  modifyDate: { kind: 'time', column: column('updated_at') },
  'createName.id': { kind: 'text', column: column('created_by'), path: 'createName' },
  'createName.name': {
    kind: 'text',
    column: userName('created_by'),
    path: 'createName',
    userIdColumn: 'created_by',
  },
  'workflow.shareStateName': { kind: 'text', column: column('share_state'), path: 'workflow' },
  'workflow.workflowType': { kind: 'text', column: column('workflow'), path: 'workflow' },
};

/** Fields of a document's transactions (its shares), under the nested path `transactions`. */
const TRANSACTION_FIELDS: Record<string, { kind: FieldSpec['kind']; column: string }> = {
  'transactions.shareType': { kind: 'text', column: 'purpose' },
  'transactions.sharedWith': { kind: 'text', column: 'share_to' },
  'transactions.sharedBy': { kind: 'text', column: 'shared_by' },
  'transactions.status': { kind: 'text', column: 'status' },
  'transactions.shareDate': { kind: 'time', column: 'created_at' },
  'transactions.actionDate': { kind: 'time', column: 'acted_at' },
};

/** A predicate true for every row (SQLite binds no booleans). */
const ALWAYS = sql<SqlBool>`1 = 1`;

const MAX_DEPTH = 8;
const MAX_CLAUSES = 200;
const LEAVES = ['term', 'terms', 'range', 'exists', 'match', 'match_all', 'nested', 'bool'] as const;

export const SEARCHABLE_FIELDS = [...Object.keys(DOCUMENT_FIELDS), ...Object.keys(TRANSACTION_FIELDS)];

class Translator {
  #clauses = 0;

  query(node: unknown, at: string, depth: number, nested?: string): Predicate {
    if (depth > MAX_DEPTH) this.#fail(at, `must not nest deeper than ${MAX_DEPTH} levels`);
    if (++this.#clauses > MAX_CLAUSES) this.#fail(at, `must not have more than ${MAX_CLAUSES} clauses`);
    const object = this.#object(node, at);
    const keys = Object.keys(object);
    if (keys.length !== 1 || !LEAVES.includes(keys[0] as (typeof LEAVES)[number])) {
      this.#fail(at, `must have exactly one of [${LEAVES.join(', ')}]`);
    }
    const key = keys[0] as (typeof LEAVES)[number];
    const body = object[key];
    const here = `${at}.${key}`;
    switch (key) {
      case 'bool':
        return this.bool(body, here, depth, nested);
      case 'nested':
        return this.nested(body, here, depth);
      case 'match_all':
        return () => ALWAYS;
      default:
        return this.leaf(key, body, here, nested);
    }
  }

  bool(node: unknown, at: string, depth: number, nested?: string): Predicate {
    const object = this.#object(node, at);
    const allowed = ['filter', 'must', 'should', 'must_not', 'minimum_should_match'];
    for (const key of Object.keys(object))
      if (!allowed.includes(key)) this.#fail(`${at}.${key}`, 'is not allowed');
    const list = (key: string): Predicate[] => {
      const value = object[key];
      if (value === undefined) return [];
      const items = Array.isArray(value) ? value : [value];
      return items.map((item, i) => this.query(item, `${at}.${key}[${i}]`, depth + 1, nested));
    };
    const required = [...list('filter'), ...list('must')];
    const should = list('should');
    const mustNot = list('must_not');
    const minimum = object.minimum_should_match ?? (required.length === 0 && should.length > 0 ? 1 : 0);
    if (minimum !== 0 && minimum !== 1) this.#fail(`${at}.minimum_should_match`, 'must be 0 or 1');
    return (eb) => {
      const parts = required.map((p) => p(eb));
      if (minimum === 1 && should.length > 0) parts.push(eb.or(should.map((p) => p(eb))));
      for (const p of mustNot) parts.push(eb.not(p(eb)));
      return parts.length === 0 ? ALWAYS : eb.and(parts);
    };
  }

  nested(node: unknown, at: string, depth: number): Predicate {
    const object = this.#object(node, at);
    const path = object.path;
    if (typeof path !== 'string') this.#fail(`${at}.path`, 'is required');
    for (const key of Object.keys(object))
      if (key !== 'path' && key !== 'query') this.#fail(`${at}.${key}`, 'is not allowed');
    const inner = this.query(object.query, `${at}.query`, depth + 1, path);
    if (path !== 'transactions') {
      const paths = new Set(Object.values(DOCUMENT_FIELDS).map((f) => f.path));
      if (!paths.has(path))
        this.#fail(`${at}.path`, `must be one of [${[...paths, 'transactions'].filter(Boolean).join(', ')}]`);
      return inner;
    }
    // A document matches when one of its transactions matches the inner query.
    return (eb) =>
      eb.exists(
        eb
          .selectFrom('shares as transaction')
          .select(sql.lit(1).as('one'))
          .whereRef('transaction.document_id', '=', 'documents.id')
          .where(() => inner(eb)),
      );
  }

  leaf(key: string, node: unknown, at: string, nested?: string): Predicate {
    const object = this.#object(node, at);
    if (key === 'exists') {
      const field = this.#field(object.field, `${at}.field`, nested);
      return (eb) => eb(field.column(eb), 'is not', null);
    }
    const names = Object.keys(object);
    if (names.length !== 1) this.#fail(at, 'must name exactly one field');
    const name = names[0]!;
    const field = this.#field(name, `${at}.${name}`, nested);
    const raw = object[name];
    const here = `${at}.${name}`;
    switch (key) {
      case 'term': {
        const value = this.#value(
          typeof raw === 'object' && raw !== null && !Array.isArray(raw)
            ? (raw as { value?: unknown }).value
            : raw,
          field,
          here,
        );
        const users = field.userIdColumn;
        if (users) return (eb) => eb(`documents.${users}`, 'in', usersNamed(eb, [String(value)]));
        return (eb) => eb(field.column(eb), '=', value);
      }
      case 'terms': {
        if (!Array.isArray(raw) || raw.length === 0 || raw.length > 1000)
          this.#fail(here, 'must be an array of 1 to 1000 values');
        const values = raw.map((v, i) => this.#value(v, field, `${here}[${i}]`));
        const users = field.userIdColumn;
        if (users) return (eb) => eb(`documents.${users}`, 'in', usersNamed(eb, values as string[]));
        return (eb) => eb(field.column(eb), 'in', values);
      }
      case 'range': {
        const bounds = this.#object(raw, here);
        const ops = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;
        const parts: [string, unknown][] = [];
        for (const [bound, value] of Object.entries(bounds)) {
          const op = ops[bound as keyof typeof ops];
          if (!op) this.#fail(`${here}.${bound}`, 'is not allowed (gt, gte, lt, lte)');
          parts.push([op, this.#value(value, field, `${here}.${bound}`)]);
        }
        if (parts.length === 0) this.#fail(here, 'must have gt, gte, lt or lte');
        return (eb) => eb.and(parts.map(([op, value]) => eb(field.column(eb), op as '>', value)));
      }
      case 'match': {
        const text = typeof raw === 'object' && raw !== null ? (raw as { query?: unknown }).query : raw;
        if (typeof text !== 'string' || text.length === 0 || text.length > 200)
          this.#fail(here, 'must be a string of 1 to 200 characters');
        if (field.kind !== 'text') this.#fail(here, 'must name a text field');
        const pattern = `%${escapeLike(text.toLowerCase())}%`;
        return (eb) => sql<SqlBool>`lower(${field.column(eb)}) like ${pattern} escape '\\'`;
      }
      default:
        this.#fail(at, 'is not a supported query');
    }
  }

  #field(name: unknown, at: string, nested?: string): FieldSpec {
    if (typeof name !== 'string') this.#fail(at, 'must name a field');
    if (nested === 'transactions') {
      const spec = TRANSACTION_FIELDS[name];
      if (!spec) this.#fail(at, `names an unknown field "${name}" of transactions`);
      return { kind: spec.kind, column: (eb) => eb.ref(`transaction.${spec.column}` as 'documents.id') };
    }
    const spec = DOCUMENT_FIELDS[name];
    if (!spec) {
      if (TRANSACTION_FIELDS[name])
        this.#fail(at, `"${name}" must be queried inside {nested:{path:'transactions'}}`);
      this.#fail(at, `names an unknown field "${name}" (fields: ${Object.keys(DOCUMENT_FIELDS).join(', ')})`);
    }
    return spec;
  }

  #value(value: unknown, field: FieldSpec | { kind: FieldSpec['kind'] }, at: string): unknown {
    switch (field.kind) {
      case 'boolean':
        if (typeof value !== 'boolean') this.#fail(at, 'must be a boolean');
        return value ? 1 : 0;
      case 'number':
        if (typeof value !== 'number' || !Number.isFinite(value)) this.#fail(at, 'must be a number');
        return value;
      case 'time': {
        const time = typeof value === 'string' || typeof value === 'number' ? new Date(value) : new Date(NaN);
        if (Number.isNaN(time.getTime())) this.#fail(at, 'must be a valid date');
        return time.toISOString();
      }
      default:
        if (typeof value !== 'string' && typeof value !== 'number') this.#fail(at, 'must be a string');
        return String(value);
    }
  }

  #object(node: unknown, at: string): Record<string, unknown> {
    if (typeof node !== 'object' || node === null || Array.isArray(node))
      this.#fail(at, 'must be of type object');
    return node as Record<string, unknown>;
  }

  #fail(at: string, message: string): never {
    throw new ValidationError(`${at}`, `${message}`);
  }
}

/** Translates `esFilters` (at `at` in the body) to a predicate over `documents`. */
export function esFilterExpression(esFilters: unknown, at = 'query.esFilters'): Predicate {
  const translator = new Translator();
  if (esFilters === undefined || esFilters === null) return () => ALWAYS;
  if (typeof esFilters === 'object' && !Array.isArray(esFilters) && !('bool' in esFilters)) {
    const keys = Object.keys(esFilters);
    const boolKeys = ['filter', 'must', 'should', 'must_not', 'minimum_should_match'];
    if (keys.length > 0 && keys.every((k) => boolKeys.includes(k))) return translator.bool(esFilters, at, 0);
  }
  return translator.query(esFilters, at, 0);
}

/**
 * The ids of the users a filter value names. The spec's creator filter gives `createName.name` "=
 * user ID, which may differ from the e-mail": callers send the login name or the id the API hands
 * out (`user.id`, `createName.id`), and both must find the same documents.
 */
function usersNamed(eb: Eb, values: string[]) {
  return eb
    .selectFrom('users')
    .select('users.id')
    .where((u) => u.or([u('users.name', 'in', values), u('users.id', 'in', values)]));
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

import { createHash, randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Actor } from './access/actor.js';
import { canonicalJson } from './audit/chain.js';
import type { Deps } from './deps.js';
import { NotFound, ValidationError } from '../base/errors.js';
import { readJson, writeJson } from '../store/db/json.js';
import type { ScrollContextTable } from '../store/db/schema.js';

export type ScrollKind = ScrollContextTable['kind'];
type ContextRow = Selectable<ScrollContextTable>;

/** Longest scroll timeout a client may ask for (seconds). */
export const MAX_SCROLL_TIMEOUT = 3600;

export interface ScrollPosition<Cursor> {
  contextId: string;
  /** Where the previous page ended; undefined before the first record. */
  cursor: Cursor | undefined;
  total: number;
  /** Scroll ids handed out so far: advancing is a compare-and-set on it. */
  sequence: number;
  timeoutSeconds: number;
}

/** spec Reports: `scroll.timeout` is a number of seconds, so 1.5 is one and a half (to the millisecond). */
const timeoutMs = (seconds: number): number => Math.round(seconds * 1000);

/** How a timeout is stored: to the millisecond, and rounded up to whole seconds for rows read by older code. */
const timeoutColumns = (seconds: number) => ({
  timeout_seconds: Math.ceil(seconds),
  timeout_ms: timeoutMs(seconds),
});

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** SHA-256 of the canonical query: a continuation must repeat the query that opened the scroll. */
export function queryHash(query: unknown): string {
  return sha256(canonicalJson(query ?? null));
}

/**
 * Scroll contexts (spec: Scroll context): opened by a search with `scroll.timeout`, continued with the
 * latest `scrollId` only, refreshed by each request, closed by DELETE or on expiry. They are rows, so
 * any node continues a scroll (DESIGN), and the position is a keyset cursor, so each record is handed
 * out once even while new ones are written.
 *
 * A scroll id is `<context>.<sequence>.<secret>`; only the SHA-256 of the latest one is stored.
 */
export class ScrollContexts {
  readonly #deps: Deps;
  readonly #kind: ScrollKind;

  constructor(deps: Deps, kind: ScrollKind) {
    this.#deps = deps;
    this.#kind = kind;
  }

  /** Opens a context for a first request; `advance` then stores where its first page ended. */
  async open<Cursor>(
    actor: Actor,
    options: { query: unknown; timeoutSeconds: number; total: number },
  ): Promise<ScrollPosition<Cursor>> {
    const now = this.#deps.clock.now();
    const id = randomBytes(12).toString('base64url');
    await this.#deps.db
      .insertInto('scroll_contexts')
      .values({
        id,
        tenant_id: actor.tenantId,
        user_id: actor.userId,
        kind: this.#kind,
        query_hash: queryHash(options.query),
        cursor: writeJson(null),
        total: options.total,
        sequence: 0,
        token_hash: '',
        ...timeoutColumns(options.timeoutSeconds),
        expires_at: new Date(now.getTime() + timeoutMs(options.timeoutSeconds)).toISOString(),
        created_at: now.toISOString(),
      })
      .execute();
    return {
      contextId: id,
      cursor: undefined,
      total: options.total,
      sequence: 0,
      timeoutSeconds: options.timeoutSeconds,
    };
  }

  /**
   * The context a continuation names. Refused: an id of another caller or kind, or one closed or
   * expired (404); a query other than the one that opened it, or a scroll id that is not the latest (400).
   */
  async resume<Cursor>(
    actor: Actor,
    options: { scrollId: string; query: unknown },
  ): Promise<ScrollPosition<Cursor>> {
    const context = await this.#find(actor, options.scrollId);
    if (context.token_hash !== sha256(options.scrollId)) {
      throw new ValidationError('scroll.id', 'is not the latest scrollId of this scroll');
    }
    if (context.query_hash !== queryHash(options.query)) {
      throw new ValidationError(null, 'a continuation must repeat the query that opened the scroll');
    }
    return {
      contextId: context.id,
      cursor: readJson<Cursor | null>(context.cursor, null) ?? undefined,
      total: context.total,
      sequence: context.sequence,
      timeoutSeconds: context.timeout_ms === null ? context.timeout_seconds : context.timeout_ms / 1000,
    };
  }

  /**
   * Stores the position after the page just read, refreshes the timeout (a new one when given) and
   * answers the next scroll id; the one before it stops working. Compare-and-set on the scroll id, so
   * of two requests racing with the same id only one gets a next id.
   */
  async advance<Cursor>(
    position: ScrollPosition<Cursor>,
    options: { cursor: Cursor | undefined; timeoutSeconds?: number | undefined },
  ): Promise<string> {
    const now = this.#deps.clock.now();
    const sequence = position.sequence + 1;
    const scrollId = `${position.contextId}.${sequence}.${randomBytes(18).toString('base64url')}`;
    const timeout = options.timeoutSeconds ?? position.timeoutSeconds;
    const updated = await this.#deps.db
      .updateTable('scroll_contexts')
      .set({
        cursor: writeJson(options.cursor ?? null),
        sequence,
        token_hash: sha256(scrollId),
        ...timeoutColumns(timeout),
        expires_at: new Date(now.getTime() + timeoutMs(timeout)).toISOString(),
      })
      .where('id', '=', position.contextId)
      .where('sequence', '=', position.sequence)
      .executeTakeFirst();
    if (Number(updated.numUpdatedRows) === 0) {
      throw new ValidationError('scroll.id', 'is not the latest scrollId of this scroll');
    }
    return scrollId;
  }

  /** DELETE /logs/scroll: closes the context the scroll id belongs to. */
  async close(actor: Actor, scrollId: string): Promise<void> {
    const context = await this.#find(actor, scrollId);
    await this.#deps.db.deleteFrom('scroll_contexts').where('id', '=', context.id).execute();
  }

  async #find(actor: Actor, scrollId: string): Promise<ContextRow> {
    const contextId = scrollId.split('.')[0] ?? '';
    const context = await this.#deps.db
      .selectFrom('scroll_contexts')
      .selectAll()
      .where('id', '=', contextId)
      .where('tenant_id', '=', actor.tenantId)
      .where('user_id', '=', actor.userId)
      .where('kind', '=', this.#kind)
      .executeTakeFirst();
    if (!context || new Date(context.expires_at) <= this.#deps.clock.now()) {
      if (context) await this.#deps.db.deleteFrom('scroll_contexts').where('id', '=', context.id).execute();
      throw new NotFound('No such scroll context (it expired or was closed)');
    }
    return context;
  }
}

/** Removes expired contexts (scheduled; expired ones are also refused and removed when named). */
export async function sweepScrollContexts(deps: Deps): Promise<number> {
  const deleted = await deps.db
    .deleteFrom('scroll_contexts')
    .where('expires_at', '<', deps.clock.now().toISOString())
    .executeTakeFirst();
  return Number(deleted.numDeletedRows);
}

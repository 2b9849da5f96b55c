import type { Deps } from '../core/deps.js';
import type { LoginRow } from '../core/identity/login-response.js';
import { BatchedLookup } from '../store/db/batched-lookup.js';
import { readJson } from '../store/db/json.js';
import { effectiveRights, type Role } from '../core/access/roles.js';
import type { Actor } from '../core/access/actor.js';
import { hashToken } from '../core/identity/secrets.js';

export type Authentication =
  | { outcome: 'ok'; actor: Actor; row: AuthenticatedRow }
  | { outcome: 'unknown' }
  | { outcome: 'expired' }
  | { outcome: 'suspended' };

// Writing last_used_at on every request would turn each read into a write; once a minute is enough.
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * The users and tenants behind a list of token hashes, with one indexed lookup per hash. Suspension
 * is read on every request, so it takes effect at once on existing sessions and keys (spec: User
 * account table).
 */
function lookupQuery(db: Deps['db'], dialect: Deps['dialect']) {
  return db
    .selectFrom('auth_tokens as t')
    .innerJoin('users as u', 'u.id', 't.user_id')
    .innerJoin('tenants as n', 'n.id', 't.tenant_id')
    .selectAll('u')
    .select([
      't.token_hash',
      't.id as token_id',
      't.kind',
      't.unlocked',
      't.expires_at',
      't.last_used_at',
      't.agent',
      't.read_only',
      'u.id as user_id',
      'n.name as tenant_name',
      'n.properties as tenant_properties',
      // GET /login lists the user's certificates: most users have none, and then no second query runs.
      (eb) =>
        eb
          .selectFrom('user_certificates as c')
          .select((c) => c.fn.countAll<number>().as('count'))
          .whereRef('c.user_id', '=', 'u.id')
          .as('certificate_count'),
    ])
    .where(dialect.isInTextList('t.token_hash', dialect.textList([])));
}

type LookupRow = Awaited<ReturnType<ReturnType<typeof lookupQuery>['executeTakeFirstOrThrow']>>;

/** The user and tenant row behind a token: GET /login answers from it without a second query. */
export type AuthenticatedRow = LoginRow;

/**
 * One lookup per database, built and compiled once (rebuilding the query on every request costs as
 * much as running it). The tokens of requests that arrive together are looked up by one statement.
 */
const lookups = new WeakMap<object, BatchedLookup<string, LookupRow>>();

function lookupOf(deps: Deps): BatchedLookup<string, LookupRow> {
  let lookup = lookups.get(deps.db);
  if (!lookup) {
    const { db, dialect } = deps;
    const query = lookupQuery(db, dialect).compile();
    lookup = new BatchedLookup(async (hashes: string[]) => {
      const { rows } = await db.executeQuery<LookupRow>({ ...query, parameters: [dialect.textList(hashes)] });
      return new Map(rows.map((row) => [row.token_hash, row]));
    });
    lookups.set(db, lookup);
  }
  return lookup;
}

/**
 * Resolves a session token or API key to its actor. Suspension is read on every request, so it takes
 * effect at once on existing sessions and keys (spec: User account table).
 */
export async function authenticate(deps: Deps, token: string, requestId: string): Promise<Authentication> {
  const row = await lookupOf(deps).get(hashToken(token));
  if (!row) return { outcome: 'unknown' };
  const now = deps.clock.now();
  if (new Date(row.expires_at) <= now) return { outcome: 'expired' };
  if (row.status !== 'active') return { outcome: 'suspended' };
  if (!row.last_used_at || now.getTime() - new Date(row.last_used_at).getTime() > LAST_USED_RESOLUTION_MS) {
    await deps.db
      .updateTable('auth_tokens')
      .set({ last_used_at: now.toISOString() })
      .where('id', '=', row.token_id)
      .execute();
  }
  return {
    outcome: 'ok',
    row,
    actor: {
      userId: row.user_id,
      name: row.name,
      tenantId: row.tenant_id,
      tenantName: row.tenant_name,
      organizationId: row.organization_id,
      role: row.role as Role,
      rights: new Set(effectiveRights(row.role, readJson<string[]>(row.rights, []))),
      tokenId: row.token_id,
      tokenKind: row.kind,
      unlocked: row.unlocked === 1,
      requestId,
      ...(row.agent === 1 ? { agent: true } : {}),
      ...(row.read_only === 1 ? { readOnly: true } : {}),
    },
  };
}

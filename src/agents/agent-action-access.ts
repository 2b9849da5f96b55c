import type { Kysely } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import { isAdmin, isTenantWide } from '../core/access/roles.js';
import { Forbidden, NotFound } from '../base/errors.js';
import type { Database } from '../store/db/schema.js';
import type { AgentActionRow } from './agent-action-view.js';

/**
 * Who reaches an agent action (lists it, approves or rejects it): the user whose key proposed it, the
 * owner of its document, and the administrators of the document's organization (global and super
 * administrators: the tenant's). Approval then runs the act as the approver, so the act's own rules
 * decide whether they hold the right to do it.
 */
export function reachableActions(db: Kysely<Database>, actor: Actor) {
  return db
    .selectFrom('agent_actions as a')
    .leftJoin('documents as d', 'd.id', 'a.document_id')
    .selectAll('a')
    .where('a.tenant_id', '=', actor.tenantId)
    .where((eb) => {
      const mine = [eb('a.created_by_user_id', '=', actor.userId), eb('d.owner_id', '=', actor.userId)];
      if (isTenantWide(actor.role)) return eb.lit(true);
      if (isAdmin(actor.role)) mine.push(eb('a.organization_id', '=', actor.organizationId));
      return eb.or(mine);
    });
}

/** An action the caller reaches; any other (another tenant's, another user's) is "not found". */
export async function loadReachableAction(
  db: Kysely<Database>,
  actor: Actor,
  id: string,
): Promise<AgentActionRow> {
  const row = await reachableActions(db, actor).where('a.id', '=', id).executeTakeFirst();
  if (!row) throw new NotFound('No such agent action');
  return row;
}

/**
 * A person decides (issue 42, Deliver 3): an agent's key never approves or rejects, its own action or
 * another's, nor does the key that proposed the action.
 */
export function assertDecidingPerson(actor: Actor, action: AgentActionRow): void {
  if (actor.agent)
    throw new Forbidden('An agent key cannot approve or reject agent actions: a person decides');
  if (actor.tokenKind === 'api_key' && actor.tokenId === action.key_id)
    throw new Forbidden('The key that proposed an agent action cannot decide it: a person decides');
  if (actor.readOnly) throw new Forbidden('A read-only key cannot approve or reject agent actions');
}

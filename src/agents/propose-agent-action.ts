import { randomUUID } from 'node:crypto';
import type { Actor } from '../core/access/actor.js';
import { loadVisible } from '../core/access/document-access.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { recordFeedEvent } from '../core/events/feed-event.js';
import { Forbidden } from '../base/errors.js';
import { writeTransaction } from '../store/db/dialect.js';
import { writeJson } from '../store/db/json.js';
import { queueMail } from '../jobs/notification-jobs.js';
import { approvalMail } from './approval-mail.js';
import { keyPrefixOf, requestDigest } from './tool-calls.js';

/** What an agent asks to do on a document: the tool and its exact request. */
export interface ProposedAct {
  tool: string;
  documentId: string;
  request: unknown;
}

/**
 * A tool that would send, share, sign, seal, remind or delete does not act (issue 42, Deliver 3): it
 * records the act as pending, for a person to approve or reject. Load → authorize (a document the
 * key's owner cannot see is "not found"; a read-only key proposes nothing) → one transaction with the
 * action, its audit record and its feed event, so an agent can wait on GET /events, and the mail to the
 * key's owner linking to the approval page (approval-mail.ts).
 */
export async function proposeAgentAction(
  deps: Deps,
  actor: Actor,
  act: ProposedAct,
): Promise<{ pendingActionId: string; state: 'pending'; expiresAt: string }> {
  if (actor.readOnly) throw new Forbidden('This key only reads: it cannot propose an act');
  const document = await loadVisible(deps.db, actor, act.documentId);
  const now = deps.clock.now();
  const id = randomUUID();
  const expiresAt = new Date(now.getTime() + deps.config.agentActionTtlHours * 3_600_000);
  const keyPrefix = await keyPrefixOf(deps, actor);
  await writeTransaction(deps.db, deps.dialect, async (trx) => {
    await trx
      .insertInto('agent_actions')
      .values({
        id,
        tenant_id: actor.tenantId,
        organization_id: document.organization_id,
        document_id: document.id,
        tool: act.tool,
        request: writeJson(act.request),
        state: 'pending',
        key_id: actor.tokenId,
        key_prefix: keyPrefix,
        created_by_user_id: actor.userId,
        created_by: actor.name,
        created_at: now.toISOString(),
        expires_at: expiresAt.toISOString(),
        decided_by: null,
        decided_at: null,
        outcome: null,
      })
      .execute();
    await recordAction(trx, actor, {
      activityType: 'agentActionCreated',
      objectType: 'document',
      objectId: document.id,
      at: now,
      data: { actionId: id, tool: act.tool, keyId: keyPrefix, requestDigest: requestDigest(act.request) },
    });
    await recordFeedEvent(trx, {
      tenantId: actor.tenantId,
      organizationId: document.organization_id,
      documentId: document.id,
      event: 'agentActionPending',
      actor: actor.name,
      at: now,
    });
    const owner = await trx
      .selectFrom('users')
      .select('email')
      .where('id', '=', actor.userId)
      .executeTakeFirst();
    if (owner?.email)
      await queueMail(
        trx,
        approvalMail({
          to: owner.email,
          documentTitle: document.title,
          tool: act.tool,
          request: act.request,
          keyId: keyPrefix,
          link: `${deps.config.publicUrl}/approve/${id}`,
          expiresAt,
        }),
        now,
        actor.requestId,
      );
  });
  return { pendingActionId: id, state: 'pending', expiresAt: expiresAt.toISOString() };
}

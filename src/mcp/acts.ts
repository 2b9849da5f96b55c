import type { Static } from 'typebox';
import type { ExecuteAct } from '../agents/approve-agent-action.js';
import type { Deps } from '../core/deps.js';
import { ValidationError } from '../base/errors.js';
import type { RemindersBody } from '../sharing/contract.js';
import { createShares, type ShareRequest } from '../sharing/create-shares.js';
import { sendReminders } from '../sharing/manage-shares.js';

/**
 * The consequential acts an agent may propose, by tool name: what approval runs, with the approver
 * as actor (agents/approve-agent-action.ts). Each answers a short outcome the agent can read back.
 */
export function agentActs(deps: Deps): ExecuteAct {
  return async (tool, request, actor) => {
    switch (tool) {
      case 'prepare_share': {
        const shares = await createShares(deps, actor, request as ShareRequest);
        return {
          shares: shares.map((s) => ({
            shareId: s.shareId,
            shareTo: s.sharedUsername,
            shareType: s.shareType,
            status: s.status,
          })),
        };
      }
      case 'send_reminder':
        return sendReminders(deps, actor, request as Static<typeof RemindersBody>);
      default:
        throw new ValidationError('tool', `${tool} is not an act an agent may propose`);
    }
  };
}

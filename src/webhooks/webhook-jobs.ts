import type { Deps } from '../core/deps.js';
import type { Worker } from '../jobs/worker.js';
import { deliverWebhook } from './deliver-webhook.js';
import { DELIVERY_JOB_TYPE } from '../core/events/delivery-job.js';
import { purgeDeliveries } from './purge-deliveries.js';
import { forgetExpiredSecrets } from './rotate-secret.js';
import { WebhookTargets } from './webhook-targets.js';
import { guardedAgents, type CallbackPolicy, type GuardedAgents } from './ssrf-guard.js';

/**
 * Gives a worker the webhook jobs: delivery attempts, the hourly purge of old deliveries, and the
 * deletion, every minute, of rotated-out secrets whose grace period is over.
 *
 * ```ts
 * const worker = new Worker(deps, { logger });
 * registerWebhookJobs(worker, deps);
 * worker.start();
 * ```
 */
export function registerWebhookJobs(worker: Worker, deps: Deps): void {
  const policy: CallbackPolicy = { allowPrivate: deps.config.webhookAllowPrivate };
  // One pair of pinned agents for all deliveries, so connections to a receiver are kept and reused.
  let agents: GuardedAgents | undefined;
  const targets = new WebhookTargets();
  // A webhook's deliveries go out one after the other, each without waiting for the one before to
  // be written down (runAhead): the receiver, not the database, sets their pace.
  worker.register(
    DELIVERY_JOB_TYPE,
    async (job, context) => {
      agents ??= guardedAgents(policy);
      await deliverWebhook(deps, job, context, { transport: { policy, agents }, targets });
    },
    { runAhead: true },
  );
  worker.every('webhooks.purge', 3_600_000, async (tick) => {
    await purgeDeliveries(deps, tick);
  });
  worker.every('webhooks.forget-secrets', 60_000, async () => {
    await forgetExpiredSecrets(deps, deps.clock.now());
  });
  worker.onStop(async () => {
    agents?.close();
    agents = undefined;
  });
}

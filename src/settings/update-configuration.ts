import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { ValidationError } from '../base/errors.js';
import { writeTransaction } from '../store/db/dialect.js';
import {
  findRestrictedKey,
  readUserConfig,
  shownConfig,
  writeUserConfig,
} from '../core/settings/user-config.js';

/**
 * Top-level parts of a user's configuration that have their own endpoints: `signature` and `initials`
 * are assigned through POST /configuration/images (Files usage rule 2). The spec's restricted keys
 * (`authenticationFactors`, `filters`, `password`, `photo`) are refused at every depth (user-config.ts).
 */
const DEDICATED: Record<string, string> = {
  signature: 'POST /configuration/images',
  initials: 'POST /configuration/images',
};

/** PUT /configuration: merges the caller's own preferences (language, formats, notifications...). */
export async function updateConfiguration(
  deps: Deps,
  actor: Actor,
  options: { configuration: Record<string, unknown> },
): Promise<Record<string, unknown>> {
  const refused =
    Object.keys(options.configuration)
      .filter((key) => DEDICATED[key])
      .map((key) => ({ path: `configuration.${key}`, use: DEDICATED[key] }))[0] ??
    findRestrictedKey(options.configuration, 'configuration');
  if (refused) {
    throw new ValidationError(`${refused.path}`, `is not allowed (use ${refused.use})`);
  }
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const merged = { ...(await readUserConfig(trx, actor.userId)), ...options.configuration };
    await writeUserConfig(trx, actor.userId, merged, deps.clock.now());
    await recordAction(trx, actor, {
      activityType: 'configurationUpdated',
      objectType: 'user',
      objectId: actor.userId,
      data: { keys: Object.keys(options.configuration) },
      at: deps.clock.now(),
    });
    return shownConfig(merged);
  });
}

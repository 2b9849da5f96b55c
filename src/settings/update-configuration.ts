import type { Actor } from '../auth/actor.js';
import { record } from '../audit/record.js';
import type { Deps } from '../deps.js';
import { ValidationError } from '../errors.js';
import { readJson, writeJson } from '../store/db/json.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * Parts of a user's configuration that have their own endpoints (spec: PUT /configuration cannot
 * change authenticationFactors, filters, password, configuration.photo). `signature` and `initials`
 * are assigned through POST /configuration/images (Files usage rule 2).
 */
const DEDICATED: Record<string, string> = {
  photo: 'PUT /users/{id} with a photo from POST /files/photo',
  signature: 'POST /configuration/images',
  initials: 'POST /configuration/images',
};

/** PUT /configuration: merges the caller's own preferences (language, formats, notifications...). */
export async function updateConfiguration(
  deps: Deps,
  actor: Actor,
  options: { configuration: Record<string, unknown> },
): Promise<Record<string, unknown>> {
  for (const key of Object.keys(options.configuration)) {
    const use = DEDICATED[key];
    if (use) {
      throw new ValidationError(
        `Request validation errors: BODY ERRORS: "configuration.${key}" is not allowed (use ${use})`,
      );
    }
  }
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const user = await trx
      .selectFrom('users')
      .select('config')
      .where('id', '=', actor.userId)
      .executeTakeFirstOrThrow();
    const merged = { ...readJson<Record<string, unknown>>(user.config, {}), ...options.configuration };
    await trx
      .updateTable('users')
      .set({ config: writeJson(merged), updated_at: deps.clock.now().toISOString() })
      .where('id', '=', actor.userId)
      .execute();
    await record(trx, {
      tenantId: actor.tenantId,
      actorId: actor.name,
      activityType: 'configurationUpdated',
      objectType: 'user',
      objectId: actor.userId,
      requestId: actor.requestId,
      data: { keys: Object.keys(options.configuration) },
      at: deps.clock.now(),
    });
    return merged;
  });
}

import type { Updateable } from 'kysely';
import type { Static } from 'typebox';
import type { UpdateStampBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import { baseVersion, changeRow } from '../core/changes/recorded-rows.js';
import type { Deps } from '../core/deps.js';
import { claimFile, FROM_SAVE_FILE } from '../core/changes/file-usage.js';
import type { StampTable } from '../store/db/schema.js';
import { loadManageableStamp } from '../core/stamps/stamp-access.js';
import { assertStampImage } from '../core/stamps/stamp-image.js';
import { stampView, type StampView } from './stamp-view.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * `file`: a new image, an unused upload from POST /files/saveFile (spec Files usage rule 2).
 * `version`: the `_version` the change is based on; without it, the current one.
 */
export type UpdateStampOptions = Static<typeof UpdateStampBody>;

/**
 * PUT /stamps/:id: renames a stamp or replaces its image, as a compare-and-set on `_version` (409
 * VERSION_MISMATCH on a stale one, like document changes). The previous image stays claimed: it
 * may be in signed documents and cannot be used again.
 */
export async function updateStamp(
  deps: Deps,
  actor: Actor,
  id: string,
  options: UpdateStampOptions,
): Promise<StampView> {
  const stamp = await loadManageableStamp(deps.db, actor, id);
  const expected = baseVersion(stamp, options.version);
  const now = deps.clock.now();
  const updated = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const set: Updateable<StampTable> = {};
    if (options.name !== undefined) set.name = options.name;
    if (options.file !== undefined && options.file !== stamp.file_id) {
      const use = { fileId: options.file, field: 'file', kinds: FROM_SAVE_FILE };
      const file = await claimFile(trx, actor, use, `stamp:${stamp.id}`, now);
      await assertStampImage(deps, file, 'file');
      set.file_id = file.id;
    }
    return changeRow(trx, actor, {
      table: 'stamps',
      id: stamp.id,
      expectedVersion: expected,
      set,
      audit: {
        activityType: 'stampEdited',
        objectType: 'stamp',
        data: (changed) => ({ version: changed.version, fields: Object.keys(set) }),
      },
      now,
    });
  });
  return stampView(deps.db, updated);
}

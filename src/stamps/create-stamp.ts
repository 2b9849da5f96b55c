import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { CreateStampBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import { insertVersionedRow } from '../core/changes/recorded-rows.js';
import type { Deps } from '../core/deps.js';
import { Forbidden, NotFound } from '../base/errors.js';
import { claimFile, FROM_SAVE_FILE } from '../core/changes/file-usage.js';
import { administersOrganization } from '../core/stamps/stamp-access.js';
import { assertStampImage } from '../core/stamps/stamp-image.js';
import { stampView, type StampView } from './stamp-view.js';
import { writeTransaction } from '../store/db/dialect.js';
import { findInTenant } from '../store/db/rows.js';

/**
 * `file`: an unused upload from POST /files/saveFile (spec Files usage rule 2: internal stamps).
 * `organization`, for organization stamps: the organization (default the caller's; others for
 * tenant-wide administrators).
 */
export type CreateStampOptions = Static<typeof CreateStampBody>;

/**
 * POST /stamps: a personal stamp for the caller, or an organization (team) stamp when an
 * administrator of that organization asks (spec Stamp). The image is claimed for the stamp, so it
 * can be used nowhere else (usage rule 2), in the same transaction as the record and its audit entry.
 */
export async function createStamp(deps: Deps, actor: Actor, options: CreateStampOptions): Promise<StampView> {
  const scope = options.scope ?? 'personal';
  const organizationId =
    scope === 'organization' ? (options.organization ?? actor.organizationId) : actor.organizationId;
  if (scope === 'organization') {
    if (!administersOrganization(actor, organizationId)) {
      throw new Forbidden('Only administrators of the organization may create organization stamps');
    }
    const organization = await findInTenant(deps.db, 'organizations', actor.tenantId, organizationId);
    if (!organization) throw new NotFound('No such organization');
  }
  const now = deps.clock.now();
  const id = randomUUID();
  const stamp = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    const use = { fileId: options.file, field: 'file', kinds: FROM_SAVE_FILE };
    const file = await claimFile(trx, actor, use, `stamp:${id}`, now);
    await assertStampImage(deps, file, 'file');
    const values = {
      id,
      organization_id: organizationId,
      owner_id: scope === 'personal' ? actor.userId : null,
      share_id: null,
      scope,
      name: options.name,
      file_id: file.id,
    };
    const data = { scope, organization: organizationId, file: file.id };
    const audit = { activityType: 'stampCreated', objectType: 'stamp', data };
    return insertVersionedRow(trx, actor, 'stamps', values, audit, now);
  });
  return stampView(deps.db, stamp);
}

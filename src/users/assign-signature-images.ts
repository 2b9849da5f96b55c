import type { Actor } from '../core/access/actor.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { FileNotUsable, Forbidden, NotFound, ValidationError } from '../base/errors.js';
import { readUserConfig, writeUserConfig } from '../core/settings/user-config.js';
import { loadManagedUser } from '../core/access/user-access.js';
import { isAdmin, mayGrantRole, type Role } from '../core/access/roles.js';
import { writeTransaction } from '../store/db/dialect.js';

/** The lists of `user.config` that hold signing images, and the upload endpoint each takes. */
export const IMAGE_KINDS = ['signature', 'initials'] as const;
export type ImageKind = (typeof IMAGE_KINDS)[number];

/** An entry of `user.config.signature` / `user.config.initials`, as POST /files/signature writes it. */
export interface ImageEntry {
  imageId: string;
  name: string;
}

export type ImageLists = Record<ImageKind, ImageEntry[]>;

export type ImageAssignment = Partial<Record<ImageKind, { imageId: string; name?: string | undefined }[]>>;

/**
 * POST /configuration/images (the caller) and PUT /users/:id/upload (the user themselves, or an
 * administrator for a user they manage): sets which images `user.config.signature` and
 * `user.config.initials` list, replacing each list sent (an empty one clears it). spec Files usage
 * rule 2: only POST /files/signature uploads go in `signature` and POST /files/initials uploads in
 * `initials`; anything else is FILE_NOT_USABLE naming the field.
 *
 * The images are the user's own uploads. An administrator may also assign images they uploaded
 * themselves (the upload endpoints record the caller as owner): those pass to the user, leave the
 * administrator's own lists, and from then on only the user signs with them (signing accepts the
 * signer's own signature and initials uploads).
 */
export async function assignSignatureImages(
  deps: Deps,
  actor: Actor,
  userId: string,
  images: ImageAssignment,
): Promise<ImageLists> {
  const targetId = await resolveTarget(deps, actor, userId);
  for (const kind of IMAGE_KINDS) {
    const ids = (images[kind] ?? []).map((e) => e.imageId);
    const twice = ids.findIndex((id, i) => ids.indexOf(id) !== i);
    if (twice >= 0) {
      throw new ValidationError(`${kind}[${twice}].imageId`, 'contains a duplicate value');
    }
  }
  const now = deps.clock.now();
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const config = await readUserConfig(trx, targetId);
    const transferred = new Set<string>();
    for (const kind of IMAGE_KINDS) {
      const wanted = images[kind];
      if (wanted === undefined) continue;
      const current = imageList(config, kind);
      const next: ImageEntry[] = [];
      for (const [i, entry] of wanted.entries()) {
        const field = `${kind}[${i}].imageId`;
        const file = await trx
          .selectFrom('files')
          .select(['id', 'kind', 'owner_id', 'name', 'used_by'])
          .where('id', '=', entry.imageId)
          .where('tenant_id', '=', actor.tenantId)
          .executeTakeFirst();
        // Anyone else's upload is as good as unknown: file ids are not shared between accounts.
        if (!file || (file.owner_id !== targetId && file.owner_id !== actor.userId)) {
          const whose = targetId === actor.userId ? 'your' : 'the user’s or your';
          throw new FileNotUsable(`${field}: no such file among ${whose} uploads`);
        }
        if (file.kind !== kind) {
          throw new FileNotUsable(`${field}: the file must be uploaded with POST /files/${kind}`);
        }
        if (file.used_by !== null) throw new FileNotUsable(`${field}: the file is already used`);
        if (file.owner_id !== targetId) transferred.add(file.id);
        const name = entry.name ?? current.find((c) => c.imageId === file.id)?.name ?? file.name;
        next.push({ imageId: file.id, name });
      }
      config[kind] = next;
    }
    if (transferred.size > 0) {
      await trx
        .updateTable('files')
        .set({ owner_id: targetId })
        .where('id', 'in', [...transferred])
        .where('owner_id', '=', actor.userId)
        .execute();
      const own = await readUserConfig(trx, actor.userId);
      for (const kind of IMAGE_KINDS)
        own[kind] = imageList(own, kind).filter((e) => !transferred.has(e.imageId));
      await writeUserConfig(trx, actor.userId, own, now);
    }
    await writeUserConfig(trx, targetId, config, now);
    const lists = { signature: imageList(config, 'signature'), initials: imageList(config, 'initials') };
    await recordAction(trx, actor, {
      activityType: 'signatureImagesAssigned',
      objectType: 'user',
      objectId: targetId,
      data: {
        signature: lists.signature.map((e) => e.imageId),
        initials: lists.initials.map((e) => e.imageId),
        ...(transferred.size > 0 ? { transferred: [...transferred] } : {}),
      },
      at: now,
    });
    return lists;
  });
}

/** The caller themselves (`me` too), or a user an administrator manages; anyone else is "not found". */
async function resolveTarget(deps: Deps, actor: Actor, userId: string): Promise<string> {
  if (userId === actor.userId || userId === 'me') return actor.userId;
  // A non-administrator naming someone else learns nothing, not even that the call needs a role.
  if (!isAdmin(actor.role)) throw new NotFound('No such user');
  const user = await loadManagedUser(deps, actor, userId);
  if (!mayGrantRole(actor.role, user.role as Role)) {
    throw new Forbidden('You may not manage a user above your role');
  }
  return user.id;
}

function imageList(config: Record<string, unknown>, kind: ImageKind): ImageEntry[] {
  const list = config[kind];
  return Array.isArray(list) ? (list as ImageEntry[]) : [];
}

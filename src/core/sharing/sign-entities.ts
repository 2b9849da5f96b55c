import type { Kysely } from 'kysely';
import { ValidationError } from '../../base/errors.js';
import type { Database } from '../../store/db/schema.js';
import { NOT_REQUIRED, PENDING, type ShareRow } from './share-types.js';

/**
 * Sign entities (spec: Sign entity `{type, quorum, userRoleId, userRoleName, shareType, order}`, as
 * templates store them) in POST /share. An entity is a role among the recipients: every `sign`
 * recipient whose `userRoleId` (or, for an entity without an id, `userRoleName`) is the entity's is
 * one of its members, and the entity is satisfied once `quorum` of its members have signed (default:
 * all of them). Then its remaining members' shares are no longer awaited: they take the status
 * `notRequired`, leave `waitingFor`, get no reminders, and their recipients can no longer sign
 * through them. The document completes when every entity is satisfied and every sign recipient
 * outside the entities has signed. In a sequence the members of an entity take its `order` (unless
 * they have their own), so they act together and the turn passes on once the quorum is in. Without
 * `signEntities` roles are only recorded and every sign recipient signs.
 */

export interface SignEntityInput {
  type: string;
  quorum?: number | undefined;
  userRoleId?: number | undefined;
  userRoleName?: string | undefined;
  shareType?: string | undefined;
  order?: number | undefined;
}

/** A recipient's role, as POST /share takes it in `data[]`. */
export interface RoleInput {
  sharePurpose: string;
  userRoleId?: number | undefined;
  userRoleName?: string | undefined;
  order?: number | undefined;
}

/** The entity a recipient belongs to: the key stored with its share, the quorum, and its order. */
export interface EntityMembership {
  key: string;
  quorum: number;
  order: number | undefined;
}

function entityKey(entity: SignEntityInput): string | undefined {
  if (entity.userRoleId !== undefined) return `id:${entity.userRoleId}`;
  const name = entity.userRoleName?.trim();
  return name ? `name:${name}` : undefined;
}

/**
 * Checks `signEntities` against the recipients and gives each recipient its entity (undefined for
 * those outside every entity), in the order of `data`. Joi-style 400 naming the field otherwise.
 */
export function assignSignEntities(
  entities: readonly SignEntityInput[] | undefined,
  recipients: readonly RoleInput[],
): (EntityMembership | undefined)[] {
  if (!entities || entities.length === 0) return recipients.map(() => undefined);
  const keys: string[] = [];
  for (const [i, entity] of entities.entries()) {
    const at = `signEntities[${i}]`;
    if (entity.type !== 'user') throw new ValidationError(`${at}.type`, 'must be [user]');
    if (entity.shareType !== undefined && entity.shareType !== 'sign') {
      throw new ValidationError(`${at}.shareType`, 'must be [sign]');
    }
    const key = entityKey(entity);
    if (!key) throw new ValidationError(`${at}`, 'must have userRoleId or userRoleName');
    if (keys.includes(key))
      throw new ValidationError(`${at}`, 'names the same role as an earlier sign entity');
    keys.push(key);
  }

  const members: number[][] = entities.map(() => []);
  const assigned = recipients.map((recipient, r) => {
    if (recipient.userRoleId === undefined && recipient.userRoleName === undefined) return undefined;
    const name = recipient.userRoleName?.trim();
    let index = entities.findIndex(
      (e) => e.userRoleId !== undefined && e.userRoleId === recipient.userRoleId,
    );
    if (index < 0 && name) {
      index = entities.findIndex((e) => e.userRoleId === undefined && e.userRoleName?.trim() === name);
    }
    const field = recipient.userRoleId !== undefined ? 'userRoleId' : 'userRoleName';
    if (index < 0) throw new ValidationError(`data[${r}].${field}`, 'must name one of the signEntities');
    if (recipient.sharePurpose !== 'sign') {
      throw new ValidationError(`data[${r}].sharePurpose`, 'must be [sign] for a member of a sign entity');
    }
    members[index]?.push(r);
    return index;
  });

  const memberships = entities.map((entity, i): EntityMembership => {
    const count = members[i]?.length ?? 0;
    if (count === 0) throw new ValidationError(`signEntities[${i}]`, 'has no recipient in data');
    const quorum = entity.quorum ?? count;
    if (quorum > count) {
      throw new ValidationError(
        `signEntities[${i}].quorum`,
        `must be less than or equal to ${count} (the recipients of that entity)`,
      );
    }
    return { key: keys[i] ?? '', quorum, order: entity.order };
  });
  return assigned.map((index) => (index === undefined ? undefined : memberships[index]));
}

/**
 * After a member of a sign entity signed (inside the signature's transaction): when the entity now has
 * its quorum, the shares of its other members still pending become `notRequired`. Returns how the
 * entity stands, for the audit record.
 */
export async function settleSignEntity(
  trx: Kysely<Database>,
  share: ShareRow,
  now: Date,
): Promise<{ signEntity: string; quorum: number; signed: number } | undefined> {
  if (share.purpose !== 'sign' || !share.sign_entity || share.quorum === null) return undefined;
  const peers = trx
    .selectFrom('shares')
    .where('document_id', '=', share.document_id)
    .where('share_group', '=', share.share_group)
    .where('sign_entity', '=', share.sign_entity);
  const { signed } = await peers
    .select((eb) => eb.fn.countAll<number | string>().as('signed'))
    .where('status', '=', 'done')
    .executeTakeFirstOrThrow();
  const count = Number(signed);
  if (count >= share.quorum) {
    await trx
      .updateTable('shares')
      .set({ status: NOT_REQUIRED, next_reminder_at: null, updated_at: now.toISOString() })
      .where('document_id', '=', share.document_id)
      .where('share_group', '=', share.share_group)
      .where('sign_entity', '=', share.sign_entity)
      .where('status', 'in', [...PENDING])
      .execute();
  }
  return { signEntity: share.sign_entity, quorum: share.quorum, signed: count };
}

import type { Static } from 'typebox';
import type { NewUser as NewUserSchema } from './contract.js';
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../core/access/actor.js';
import { hashPassword, hashToken, newToken } from '../core/identity/secrets.js';
import { recordAction } from '../core/audit/record.js';
import type { Deps } from '../core/deps.js';
import { Conflict, LimitExceeded } from '../base/errors.js';
import { claimFile, FROM_PHOTO } from '../core/changes/file-usage.js';
import type { Database } from '../store/db/schema.js';
import { writeJson } from '../store/db/json.js';
import { assertAdmin } from '../core/access/user-access.js';
import { resolveOrganization } from './organizations.js';
import { assertMayGrant, storedRights } from './grants.js';
import { writeTransaction } from '../store/db/dialect.js';

/**
 * One user of POST /users; `photo` is an unused POST /files/photo upload of the caller (spec Files usage rule
 * 1).
 */
export type NewUser = Static<typeof NewUserSchema>;

export interface CreatedUser {
  id: string;
  /** Only for users created without a password: the one-time token for PUT /users/activate. */
  activationToken?: string;
}

const BULK_LIMIT = 100;
const ACTIVATION_TTL_MS = 7 * 86_400_000;

/**
 * POST /users (administrators; Contract: Identity and rights). One user or up to 100 at once, all
 * or none. An administrator never grants a role above their own, nor rights they do not hold.
 * Photos are claimed for their users (spec Files usage rule 1); errors name the field as the request
 * spelled it: `photo` for one object, `[2].photo` in an array (`bulk`).
 */
export async function createUsers(
  deps: Deps,
  actor: Actor,
  users: NewUser[],
  options: { bulk?: boolean } = {},
): Promise<CreatedUser[]> {
  assertAdmin(actor);
  if (users.length > BULK_LIMIT) throw new LimitExceeded(`At most ${BULK_LIMIT} users per request`);
  for (const user of users) assertMayGrant(actor, user.role ?? 'user', user.rights);
  const names = users.map((u) => u.name.trim().toLowerCase());
  const duplicate = names.find((n, i) => names.indexOf(n) !== i);
  if (duplicate) throw new Conflict(`The name ${duplicate} appears twice in the request`);
  // Hash outside the transaction: argon2 is slow on purpose and must not hold the write lock.
  const hashes = await Promise.all(
    users.map((u) => (u.password ? hashPassword(u.password) : Promise.resolve(null))),
  );
  const now = deps.clock.now();
  return writeTransaction(deps.db, deps.dialect, async (trx) => {
    const created: CreatedUser[] = [];
    for (const [i, user] of users.entries()) {
      const photoField = options.bulk ? `[${i}].photo` : 'photo';
      created.push(
        await insertUser(trx, actor, { ...user, name: names[i] ?? '' }, hashes[i] ?? null, photoField, now),
      );
    }
    return created;
  });
}

async function insertUser(
  trx: Kysely<Database>,
  actor: Actor,
  user: NewUser,
  passwordHash: string | null,
  photoField: string,
  now: Date,
): Promise<CreatedUser> {
  const taken = await trx
    .selectFrom('users')
    .select('id')
    .where('tenant_id', '=', actor.tenantId)
    .where('name', '=', user.name)
    .executeTakeFirst();
  if (taken) throw new Conflict(`A user named ${user.name} already exists`);
  const organizationId = await resolveOrganization(trx, actor, user.organization, now);
  const role = user.role ?? 'user';
  const id = randomUUID();
  let photo: string | null = null;
  if (user.photo !== undefined) {
    // Each claim on its own: one photo id given to two users of a bulk request is a reuse.
    const use = { fileId: user.photo, field: photoField, kinds: FROM_PHOTO };
    photo = (await claimFile(trx, actor, use, `user:${id}`, now)).id;
  }
  await trx
    .insertInto('users')
    .values({
      id,
      tenant_id: actor.tenantId,
      organization_id: organizationId,
      name: user.name,
      display_name: user.displayName ?? null,
      email: user.email?.toLowerCase() ?? null,
      password_hash: passwordHash,
      role,
      rights: storedRights(role, user.rights),
      status: 'active',
      photo,
      config: writeJson({ signature: [] }),
      mfa_secret: null,
      mfa_enabled: 0,
      created_by: actor.userId,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    })
    .execute();
  await recordAction(trx, actor, {
    activityType: 'userCreated',
    objectType: 'user',
    objectId: id,
    data: { name: user.name, role, organization: organizationId },
    at: now,
  });
  if (passwordHash) return { id };
  const activationToken = newToken();
  await trx
    .insertInto('activation_tokens')
    .values({
      token_hash: hashToken(activationToken),
      user_id: id,
      expires_at: new Date(now.getTime() + ACTIVATION_TTL_MS).toISOString(),
    })
    .execute();
  return { id, activationToken };
}

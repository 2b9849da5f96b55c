import type { Kysely, Selectable } from 'kysely';
import { readJson } from '../../store/db/json.js';
import type { Database, UserTable } from '../../store/db/schema.js';
import { effectiveRights } from '../access/roles.js';
import { shownConfig } from '../settings/user-config.js';
import type { CertificateView } from './user-certificates.js';

/** A user as the API shows it: never the password hash or the TOTP secret. */
export interface UserView {
  id: string;
  name: string;
  displayName: string | null;
  email: string | null;
  role: string;
  organization: string;
  status: string;
  photo: string | null;
  rights: string[];
  config: Record<string, unknown> & { signature: { imageId: string; name: string }[] };
  /** Personal certificates for two-step signing (POST /users/{id}/certificate). */
  certificates: CertificateView[];
  authenticationFactors: string[];
  hasPassword: boolean;
  createdAt: string;
}

export function userView(row: Selectable<UserTable>, certificates: CertificateView[] = []): UserView {
  // A blob the user writes: shown without the keys the spec keeps out of it (user-config.ts).
  const config = shownConfig(readJson<Record<string, unknown>>(row.config, {}));
  const signature = Array.isArray(config.signature)
    ? (config.signature as UserView['config']['signature'])
    : [];
  const factors = [row.password_hash ? 'password' : null, row.mfa_enabled ? 'totp' : null].filter(
    (f): f is string => f !== null,
  );
  return {
    id: row.id,
    name: row.name,
    displayName: row.display_name,
    email: row.email,
    role: row.role,
    organization: row.organization_id,
    status: row.status,
    photo: row.photo,
    rights: effectiveRights(row.role, readJson<string[]>(row.rights, [])),
    config: { ...config, signature },
    certificates,
    authenticationFactors: factors,
    hasPassword: row.password_hash !== null,
    createdAt: row.created_at,
  };
}

/**
 * The login names of users by id, read in one query, for views that name a creator or owner; an id
 * without a user (an account deleted since) has none.
 */
export async function loginNames(db: Kysely<Database>, ids: Iterable<string>): Promise<Map<string, string>> {
  const wanted = [...new Set(ids)];
  const users =
    wanted.length === 0
      ? []
      : await db.selectFrom('users').select(['id', 'name']).where('id', 'in', wanted).execute();
  return new Map(users.map((u) => [u.id, u.name]));
}

import type { Selectable } from 'kysely';
import type { Deps } from '../deps.js';
import type { Json, UserTable } from '../../store/db/schema.js';
import { NotFound } from '../../base/errors.js';
import { loginSettings, readProperties } from '../settings/properties.js';
import { listCertificates } from './user-certificates.js';
import { userView, type UserView } from './user-view.js';

/** The spec's Login response. */
export interface LoginResponse {
  logged: boolean;
  hasPassword?: boolean;
  isUnlocked?: boolean;
  token?: string;
  tenant?: string;
  rights?: string[];
  settings?: Record<string, unknown>;
  user?: UserView;
}

/** A user with their tenant's name and properties: all a Login response is made of. */
export type LoginRow = Selectable<UserTable> & {
  tenant_name: string;
  tenant_properties: Json;
  /** How many personal certificates the user has, when the lookup counted them (0: no query for them). */
  certificate_count?: number | string | null;
};

/**
 * Builds the Login response for a user and one of their tokens; `token` is left out when not wanted.
 * `row` saves the lookup when the caller already holds it (GET /login, from authentication).
 */
export async function loginResponse(
  deps: Deps,
  options: { userId: string; unlocked: boolean; token: string | undefined; row?: LoginRow | undefined },
): Promise<LoginResponse> {
  const row: LoginRow | undefined =
    options.row ??
    (await deps.db
      .selectFrom('users')
      .innerJoin('tenants', 'tenants.id', 'users.tenant_id')
      .selectAll('users')
      .select(['tenants.name as tenant_name', 'tenants.properties as tenant_properties'])
      .where('users.id', '=', options.userId)
      .executeTakeFirst());
  if (!row) throw new NotFound('No such user');
  const certificates =
    row.certificate_count !== undefined && Number(row.certificate_count) === 0
      ? []
      : await listCertificates(deps, row.id);
  const user = userView(row, certificates);
  return {
    logged: true,
    hasPassword: user.hasPassword,
    isUnlocked: options.unlocked,
    ...(options.token !== undefined ? { token: options.token } : {}),
    tenant: row.tenant_name,
    rights: user.rights,
    settings: loginSettings(readProperties(row.tenant_properties, deps.config.sessionTtlDays)),
    user,
  };
}

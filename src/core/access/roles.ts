/** Roles and rights of the Contract (DESIGN: Identity and rights). */
export const ROLES = [
  'read',
  'prepare',
  'sign',
  'user',
  'organizationAdmin',
  'globalAdmin',
  'superAdmin',
] as const;
export type Role = (typeof ROLES)[number];

/** Lite roles: counted apart (`liteUserCount`) and given fewer rights by default. */
export const LITE_ROLES: readonly Role[] = ['read', 'prepare', 'sign'];
export const ADMIN_ROLES: readonly Role[] = ['organizationAdmin', 'globalAdmin', 'superAdmin'];

export const RIGHTS = [
  'use_file_management',
  'use_document_management',
  'use_webhooks',
  'use_all_documents_export',
  'view_logs',
  'view_attachments',
  'add_file_attachments',
  'download_attachment',
] as const;
export type Right = (typeof RIGHTS)[number];

const RANK: Record<Role, number> = {
  read: 0,
  prepare: 0,
  sign: 0,
  user: 1,
  organizationAdmin: 2,
  globalAdmin: 3,
  superAdmin: 4,
};

const MEMBER_RIGHTS: Right[] = [
  'use_file_management',
  'use_document_management',
  'view_attachments',
  'add_file_attachments',
  'download_attachment',
];

/** Rights a new user of each role gets when the administrator names none. */
export const DEFAULT_RIGHTS: Record<Role, readonly Right[]> = {
  read: ['view_attachments'],
  prepare: MEMBER_RIGHTS,
  sign: ['view_attachments', 'download_attachment'],
  user: MEMBER_RIGHTS,
  organizationAdmin: [...MEMBER_RIGHTS, 'use_webhooks', 'view_logs'],
  globalAdmin: RIGHTS,
  superAdmin: RIGHTS,
};

export function isAdmin(role: string): boolean {
  return (ADMIN_ROLES as readonly string[]).includes(role);
}

export function isLite(role: string): boolean {
  return (LITE_ROLES as readonly string[]).includes(role);
}

/** Whether `actor` may hand out `role`: never a role above one's own. */
export function mayGrantRole(actorRole: Role, role: Role): boolean {
  return RANK[role] <= RANK[actorRole];
}

/** Global and super administrators act on the whole tenant; an organization administrator on one organization. */
export function isTenantWide(role: string): boolean {
  return role === 'globalAdmin' || role === 'superAdmin';
}

/** The rights a user holds: a super-administrator holds every right whatever was stored. */
export function effectiveRights(role: string, stored: readonly string[]): Right[] {
  if (role === 'superAdmin') return [...RIGHTS];
  return RIGHTS.filter((r) => stored.includes(r));
}

import type { Kysely } from 'kysely';
import { Type, type Static } from 'typebox';
import type { Actor } from '../access/actor.js';
import { Forbidden, ValidationError } from '../../base/errors.js';
import { readJson } from '../../store/db/json.js';
import type { Database } from '../../store/db/schema.js';
import type { DefinitionField } from './definition-fields.js';
import { isTenantWide, ROLES } from '../access/roles.js';

/** The built-in document definition (Contract: `d_default`): no fields, open to everyone. */
export const DEFAULT_DEFINITION = 'd_default';

/**
 * Who may use a definition: make documents of its type, drafts and templates naming it (spec
 * Documents rule 4: "rights on both folder and document type"). The spec does not show the shape;
 * this is ours. Absent or null: everyone in the tenant.
 */
export const UsableBy = Type.Union(
  [
    Type.Object(
      {
        users: Type.Optional(
          Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
            maxItems: 1000,
            description: 'Users, by id or login name (stored as ids).',
          }),
        ),
        groups: Type.Optional(
          Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
            maxItems: 100,
            description: 'Groups: organization ids (see POST /groups/search); their members.',
          }),
        ),
        roles: Type.Optional(
          Type.Array(Type.Enum([...ROLES]), { maxItems: ROLES.length, description: 'Users of these roles.' }),
        ),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  {
    description:
      'Who may create documents of this type (POST /documents, POST /documents/bulk/create, PUT /documents/{version} changing `documentType`) and name it in drafts and templates: the users named, the members of the groups named and the users of the roles named; global and super administrators always (they change definitions). Absent or null: everyone in the tenant. `{}` leaves it to global and super administrators. Anyone else gets 403 FORBIDDEN; every member of the tenant still reads the definition.',
  },
);
export type UsableBy = Static<typeof UsableBy>;

/** What a stored definition's data says about its use, beside its free description. */
interface DefinitionRules {
  fields?: DefinitionField[];
  usableBy?: UsableBy;
}

/** A document definition: its name and the fields its documents carry. */
export interface Definition {
  name: string;
  fields: DefinitionField[];
  usableBy: UsableBy | undefined;
}

/** Whether `actor` may use a definition restricted to `usableBy` (see `UsableBy`). */
function mayUseDefinition(actor: Actor, usableBy: UsableBy | undefined): boolean {
  if (!usableBy) return true;
  // Global and super administrators change definitions: refusing them would protect nothing.
  if (isTenantWide(actor.role)) return true;
  return (
    (usableBy.users ?? []).includes(actor.userId) ||
    (usableBy.groups ?? []).includes(actor.organizationId) ||
    (usableBy.roles ?? []).includes(actor.role)
  );
}

/**
 * The definition a document type names, whoever may use it (for a document that already has that
 * type). A name the tenant has no definition for is 400 naming `field`.
 */
export async function loadDefinition(
  db: Kysely<Database>,
  actor: Actor,
  name: string,
  field: string,
): Promise<Definition> {
  if (name === DEFAULT_DEFINITION) return { name, fields: [], usableBy: undefined };
  const row = await db
    .selectFrom('definitions')
    .select('data')
    .where('tenant_id', '=', actor.tenantId)
    .where('name', '=', name)
    .executeTakeFirst();
  if (!row) throw new ValidationError(field, 'must name a document definition');
  const rules = readJson<DefinitionRules>(row.data, {});
  return { name, fields: rules.fields ?? [], usableBy: rules.usableBy ?? undefined };
}

/**
 * The definition a document type names, when the caller may use it (spec Documents rule 4: "the
 * caller needs rights on both folder and document type"). Unknown is 400 naming `field`; a
 * definition the caller may not use is 403 FORBIDDEN: every member of the tenant reads definitions
 * (GET /definitions/documents/:name), so saying it exists leaks nothing.
 */
export async function loadUsableDefinition(
  db: Kysely<Database>,
  actor: Actor,
  name: string,
  field: string,
): Promise<Definition> {
  const definition = await loadDefinition(db, actor, name, field);
  if (!mayUseDefinition(actor, definition.usableBy))
    throw new Forbidden(
      `Documents of type ${name} may be made only by those its definition's usableBy names`,
    );
  return definition;
}

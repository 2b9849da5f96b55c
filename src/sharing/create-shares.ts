import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { SignatureField } from '../core/documents/document-contract.js';
import type { RecipientData, ShareBody } from './contract.js';
import type { Actor } from '../core/access/actor.js';
import { hashPassword } from '../core/identity/secrets.js';
import type { OidcProviderConfig } from '../base/config.js';
import type { Deps } from '../core/deps.js';
import { loadManageable, type DocumentRow } from '../core/access/document-access.js';
import { changeDocument } from '../core/changes/change-document.js';
import type { CustomField } from '../core/documents/custom-fields.js';
import { LimitExceeded, ValidationError } from '../base/errors.js';
import { queueMail } from '../jobs/notification-jobs.js';
import { queuePreviewAhead } from '../core/sharing/preview-ahead.js';
import { shareMail } from '../notify/mail/share-mail.js';
import { readJson, writeJson } from '../store/db/json.js';
import { commitInCall, drawInCall, prepareVisualsInCall } from '../core/signing/signer-change.js';
import { offeredProviders } from '../core/sharing/identity-factors.js';
import { resolveRecipient, type ResolvedRecipient } from './resolve-recipient.js';
import { checkFieldsCompletable, checkImportedFields, withFieldIds } from '../core/sharing/share-fields.js';
import { prepareValueFields } from '../core/sharing/field-types.js';
import { issueShareLink, sharerOf, signerPageLink } from '../core/sharing/share-links.js';
import { assignSignEntities } from '../core/sharing/sign-entities.js';
import {
  ACTION_PURPOSES,
  NATIONAL_ID_PROVIDER,
  REMINDABLE_PURPOSES,
  type OAuthFactor,
  type ShareOptions,
  type ShareRow,
} from '../core/sharing/share-types.js';
import { shareViews, type ShareView } from '../core/views/share-view.js';
import { writeTransaction } from '../store/db/dialect.js';
import { shareFolder } from './share-folder.js';

/**
 * One recipient of POST /share; `userRoleId`/`userRoleName` make them a member of that sign entity
 * (sign-entities.ts).
 */
export type RecipientInput = Static<typeof RecipientData>;

type FieldInput = Static<typeof SignatureField>;

/** The body of POST /share; root `signatures`, `images`, `annotations` are the sharer's own (DESIGN). */
export type ShareRequest = Static<typeof ShareBody>;

const MAX_RECIPIENTS = 100;

/**
 * spec Sharing rule 3: factors default to `email` only; an `email` factor must match the recipient's
 * e-mail; other factors only when `allowedOAuths` holds only the national digital identity provider.
 * `at` is where the recipient sits in the body (`data[0]`), empty when its fields are at the root.
 */
export function checkOAuthFactors(
  factors: OAuthFactor[] | undefined,
  allowedOAuths: string[] | undefined,
  email: string | null,
  at: string,
): OAuthFactor[] {
  if (!factors || factors.length === 0) return email ? [{ type: 'email', value: email }] : [];
  const field = (i: number, key: string) => `${at ? `${at}.` : ''}oauthFactors[${i}].${key}`;
  for (const [i, factor] of factors.entries()) {
    if (factor.type === 'email') {
      if (!email || factor.value.trim().toLowerCase() !== email) {
        throw new ValidationError(field(i, 'value'), "must match the recipient's e-mail");
      }
    } else if (!(allowedOAuths?.length === 1 && allowedOAuths[0] === NATIONAL_ID_PROVIDER)) {
      throw new ValidationError(
        field(i, 'type'),
        `${factor.type} is allowed only when allowedOAuths holds only ${NATIONAL_ID_PROVIDER}`,
      );
    }
  }
  return factors.map((f) => ({
    type: f.type,
    value: f.type === 'email' ? f.value.trim().toLowerCase() : f.value,
  }));
}

/**
 * `allowedOAuths` names identity providers the operator configured (OIDC_PROVIDERS, ignoring case):
 * a provider that does not exist could never be passed and would lock the recipient out for good.
 */
export function checkAllowedOAuths(
  allowedOAuths: string[] | undefined,
  configured: readonly OidcProviderConfig[],
  at: string,
): void {
  const offered = offeredProviders(allowedOAuths ?? [], configured).map((p) => p.name.toLowerCase());
  for (const [i, name] of (allowedOAuths ?? []).entries()) {
    if (!offered.includes(name.toLowerCase())) {
      throw new ValidationError(
        `${at}.allowedOAuths[${i}]`,
        `"${name}" is not a configured identity provider [${configured.map((p) => p.name).join(', ')}]`,
      );
    }
  }
}

/** Whether a signature field is the recipient's: named in its `user`, or, without `user`, by their role. */
function fieldIsFor(field: FieldInput, key: string, input: RecipientInput): boolean {
  if (field.user?.length) return field.user.some((u) => u.trim().toLowerCase() === key);
  if (field.userRoleId !== undefined) return field.userRoleId === input.userRoleId;
  if (field.userRoleName !== undefined) return field.userRoleName.trim() === input.userRoleName?.trim();
  return false;
}

/** spec Reminders: only sign, approve and review shares are reminded; others get no schedule. */
export function firstReminder(
  purpose: string,
  reminder: RecipientInput['automaticReminder'] | null,
): string | null {
  return reminder && REMINDABLE_PURPOSES.includes(purpose) ? new Date(reminder.start).toISOString() : null;
}

/**
 * spec Sharing: POST /share `type` is the "document type" (the Share's `sharedObjectEsType`), and
 * `objectType` says what `id` names (`document`; folders are "a special kind of document", so
 * `document` also names one, and `folder` only one). A body that says otherwise is refused, naming both.
 */
function checkSharedType(request: ShareRequest, doc: DocumentRow): void {
  if (request.type !== undefined && request.type !== doc.document_type) {
    throw new ValidationError(
      'type',
      `must be the type of the ${doc.kind} "id" names: "${request.type}" was sent, the ${doc.kind} is of type "${doc.document_type}"`,
    );
  }
  if (request.objectType === 'folder' && doc.kind !== 'folder') {
    throw new ValidationError('objectType', `is "folder", but "id" names a ${doc.kind}`);
  }
}

/**
 * POST /share (spec Sharing): shares a document with internal users and external e-mail recipients.
 * Each recipient once; `signatureFields[*].user` must be among them (a field without `user` goes to
 * the recipients of its `userRoleId`/`userRoleName`); sequential shares take turns by `order` (or
 * their place in `data`; members of a sign entity default to the entity's `order`). `signEntities`
 * set quorums (sign-entities.ts). A sign share moves the document to `inprogress` from any state
 * (spec: "any → POST /share (purpose sign) → inprogress": a finished document starts a new round on
 * its current file; earlier signatures stay in it) and emits
 * `signRequest`; recipients whose turn it is are notified (external ones with their link). Root
 * `signatures`/`images`/`annotations` are the sharer's: signed (or annotated) first, in the same
 * transaction, so a failure leaves no share and no file used up.
 */
export async function createShares(deps: Deps, actor: Actor, request: ShareRequest): Promise<ShareView[]> {
  if (request.data.length === 0) throw new ValidationError('data', 'must contain at least 1 items');
  if (request.data.length > MAX_RECIPIENTS)
    throw new LimitExceeded(`At most ${MAX_RECIPIENTS} recipients per share`);
  const doc = await loadManageable(deps.db, actor, request.id);
  checkSharedType(request, doc);
  if (doc.kind === 'folder') return shareFolder(deps, actor, doc, request);

  const seen = new Set<string>();
  const recipients: (ResolvedRecipient & {
    input: RecipientInput;
    at: string;
    oauthFactors: OAuthFactor[];
  })[] = [];
  for (const [i, input] of request.data.entries()) {
    const at = `data[${i}]`;
    const { key, user, email } = await resolveRecipient(deps.db, actor.tenantId, input.shareTo, at);
    // Rule 1: a recipient appears once, however many fields they fill.
    if (seen.has(key)) throw new ValidationError(`${at}.shareTo`, 'contains a duplicate value');
    seen.add(key);
    if (user && (input.password || input.phone || input.emailCode)) {
      throw new ValidationError(
        null,
        `"${at}.password", "${at}.phone" and "${at}.emailCode" are for external recipients only`,
      );
    }
    checkAllowedOAuths(input.allowedOAuths, deps.config.oidcProviders, at);
    const oauthFactors = checkOAuthFactors(input.oauthFactors, input.allowedOAuths, email, at);
    if (input.validUntil && new Date(input.validUntil) <= deps.clock.now()) {
      throw new ValidationError(`${at}.validUntil`, 'must be in the future');
    }
    recipients.push({ input, at, key, user, email, oauthFactors });
  }
  // Rule 2: the users of signature fields are recipients of this share.
  for (const [i, field] of (request.signatureFields ?? []).entries()) {
    for (const [j, user] of (field.user ?? []).entries()) {
      if (!seen.has(user.trim().toLowerCase())) {
        throw new ValidationError(
          `signatureFields[${i}].user[${j}]`,
          'must be one of the recipients in data',
        );
      }
    }
  }
  // spec Custom field: the creator may place the document's custom fields as imported fields.
  checkImportedFields(request.signatureFields, readJson<CustomField[]>(doc.custom_fields, []));
  const mainFile = doc.main_file_id
    ? await deps.db.selectFrom('files').select('pages').where('id', '=', doc.main_file_id).executeTakeFirst()
    : undefined;
  const recipientsOf = (field: FieldInput) => recipients.filter((r) => fieldIsFor(field, r.key, r.input));
  checkFieldsCompletable(request.signatureFields, {
    pageCount: mainFile?.pages ?? null,
    purposesOf: (field) => recipientsOf(field).map((r) => r.input.sharePurpose),
  });
  // Date, checkbox, select and number fields the signer's page can show; selects get their options.
  const valueFields = await prepareValueFields(deps.db, actor, request.signatureFields ?? [], (field) =>
    recipientsOf(field).map((r) => r.input.dateFormat),
  );
  // Each field gets its own identity, the same in every share it goes to (share-fields.ts).
  const fields = withFieldIds(valueFields);
  const entities = assignSignEntities(request.signEntities, request.data);
  // DESIGN "Signing inside other calls": loaded and checked before the transaction, reading only.
  const visuals = await prepareVisualsInCall(deps, actor, {
    signatures: request.signatures,
    images: request.images,
    annotations: request.annotations,
    level: request.level,
  });
  if (visuals && !doc.main_file_id) {
    throw new ValidationError(
      null,
      '"signatures", "images" and "annotations" need a document with a main file (body.pdfFile)',
    );
  }

  const passwords = await Promise.all(
    recipients.map((r) => (r.input.password ? hashPassword(r.input.password) : Promise.resolve(null))),
  );
  const sequential = request.sequential === true;
  const ordered = recipients
    .map((r, index) => ({
      ...r,
      entity: entities[index],
      position: r.input.order ?? entities[index]?.order ?? index,
      password: passwords[index] ?? null,
    }))
    .sort((a, b) => a.position - b.position);
  const firstActionPosition = ordered.find((r) => ACTION_PURPOSES.includes(r.input.sharePurpose))?.position;
  const now = deps.clock.now();
  // DESIGN: remote calls never run inside a database transaction. The sharer's signature is made first,
  // with no transaction open; the transaction commits it with the shares.
  const drawn =
    visuals && (await drawInCall(deps, actor, visuals, { document: doc, fileId: doc.main_file_id, now }));
  const group = randomUUID();
  const sender = (await sharerOf(deps.db, actor.userId)) ?? { name: actor.name, email: null };

  const rows = await writeTransaction(deps.db, deps.dialect, async (trx) => {
    // The sharer signs before the shares go out: the recipients get the signed file.
    const current = drawn
      ? (
          await commitInCall(trx, deps, {
            actor,
            doc,
            drawn,
            expectedVersion: doc.version,
            bumpVersion: true,
            now,
          })
        ).doc
      : doc;
    const created: ShareRow[] = [];
    for (const r of ordered) {
      const waits =
        sequential && ACTION_PURPOSES.includes(r.input.sharePurpose) && r.position !== firstActionPosition;
      const options: ShareOptions = {
        rights: r.input.rights ?? [],
        language: r.input.language,
        dateFormat: r.input.dateFormat,
        timeFormat: r.input.timeFormat,
        oauthFactors: r.oauthFactors,
        allowedOAuths: r.input.allowedOAuths ?? [],
        automaticReminder: r.input.automaticReminder,
        signatureFields: fields.filter((f) => fieldIsFor(f, r.key, r.input)),
        isMandatory: r.input.isMandatory ?? true,
        userRoleId: r.input.userRoleId,
        userRoleName: r.input.userRoleName,
        ...(r.input.emailCode ? { emailCode: true } : {}),
      };
      const row: ShareRow = {
        id: randomUUID(),
        tenant_id: actor.tenantId,
        document_id: doc.id,
        share_group: group,
        shared_by: actor.userId,
        purpose: r.input.sharePurpose,
        share_to: r.user ? r.user.name : r.key,
        user_id: r.user?.id ?? null,
        group_id: null,
        email: r.email,
        status: waits ? 'waiting' : 'active',
        sequential: sequential ? 1 : 0,
        position: r.position,
        message: r.input.message ?? null,
        valid_until: r.input.validUntil ? new Date(r.input.validUntil).toISOString() : null,
        password_hash: r.password,
        phone: r.input.phone ?? null,
        otp_hash: null,
        otp_expires_at: null,
        options: writeJson(options),
        next_reminder_at: firstReminder(r.input.sharePurpose, r.input.automaticReminder),
        last_reminder_at: null,
        message_read: 0,
        delegated_from: null,
        acted_at: null,
        reason: null,
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
        sign_entity: r.entity?.key ?? null,
        quorum: r.entity?.quorum ?? null,
        identity_provider: null,
        identity_verified_at: null,
      };
      await trx.insertInto('shares').values(row).execute();
      created.push(row);
      // A recipient waiting for their turn gets their link when it comes (workflow.ts), not before.
      const token = r.user || waits ? undefined : await issueShareLink(trx, row, now);
      if (!waits && r.email) {
        const link = token
          ? `${deps.config.publicUrl}/s/${token}`
          : signerPageLink(deps.config.publicUrl, current.id);
        await queueMail(
          trx,
          shareMail({
            kind: 'invitation',
            to: r.email,
            language: r.input.language,
            documentTitle: current.title,
            from: sender.name,
            sender,
            purpose: r.input.sharePurpose,
            link,
            note: r.input.message,
            deadline: r.input.validUntil,
          }),
          now,
          actor.requestId,
        );
      }
    }
    if (created.some((row) => row.status === 'active' && row.email))
      await queuePreviewAhead(trx, current, now);
    const signs = ordered.some((r) => r.input.sharePurpose === 'sign');
    await changeDocument(trx, actor, {
      doc: current,
      expectedVersion: current.version,
      // Signing in the call already counted it as the call's one change.
      bumpVersion: !visuals,
      set: signs ? { share_state: 'inprogress' } : {},
      activityType: 'documentShared',
      event: signs ? 'signRequest' : undefined,
      data: {
        recipients: ordered.map((r) => r.key),
        purposes: ordered.map((r) => r.input.sharePurpose),
        sequential,
        ...(request.signEntities?.length
          ? {
              signEntities: [...new Set(ordered.flatMap((r) => (r.entity ? [r.entity] : [])))].map((e) => ({
                signEntity: e.key,
                quorum: e.quorum,
              })),
            }
          : {}),
      },
      now,
    });
    return created;
  });
  // The link is the recipient's credential: it goes to the recipient only, never into this answer.
  return shareViews(deps.db, rows, deps.config.oidcProviders);
}

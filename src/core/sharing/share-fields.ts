import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { CustomField } from '../documents/custom-fields.js';
import { ValidationError } from '../../base/errors.js';
import type { SignatureEntry, TextEntry } from '../documents/visual-entries.js';
import { readJson } from '../../store/db/json.js';
import type { Database } from '../../store/db/schema.js';
import { answersRequired, fieldConfig, VALUE_SUBTYPES, writtenAnswer } from './field-types.js';
import { ACTION_PURPOSES, shareOptions, type ShareRow } from './share-types.js';

/**
 * Signature fields of a share that carry their own text (spec Signature field; Custom field):
 * - a `readOnly` annotation field with a predefined `text` is written into the document as it is;
 * - an `annotation` field whose `config` (a JSON string) holds `{"importedField": "<customField key>"}`
 *   shows that custom field of the document: "in the sharing flow the creator can place them as
 *   imported fields". It is read-only, and its text is the custom field's value as it stands when
 *   the recipient reads or signs (so a correction made by the owner before then is what they get).
 * Both are written, as text annotations, in the signer's own revision when they sign through the share.
 */

/**
 * A field's own identity (issue 24): every signature field of a share gets a `fieldId` when the share
 * is created, so a field is answerable even when its `customId` is empty (spec Signature field:
 * "customId may be empty"). Answers name a field by its `fieldId`, or by its `customId` when it has one.
 */
export function withFieldIds<T extends SignatureFieldInput>(fields: T[]): (T & { fieldId: string })[] {
  return fields.map((field) => ({ ...field, fieldId: `fld_${randomBytes(9).toString('base64url')}` }));
}

/** Whether `id` (an answer's `fieldId`, or an upload's `fieldId`/`customId`) names this field. */
export function namesField(field: SignatureFieldInput, id: string): boolean {
  if (id === '') return false;
  return field.fieldId === id || (typeof field.customId === 'string' && field.customId === id);
}

/** How a field is recorded with what answered it: its `fieldId` (fields of older shares: `customId`). */
export function fieldKey(field: SignatureFieldInput): string {
  if (typeof field.fieldId === 'string') return field.fieldId;
  return typeof field.customId === 'string' ? field.customId : '';
}

/** Signature field types only a signer fills, in the sign call. */
const SIGNER_TYPES = ['signature', 'initials', 'stamp', 'wacom', 'image'];
/** Of those, what the signer's page cannot ask for (it draws signatures and initials only). */
const NOT_ON_THE_PAGE = ['stamp', 'image'];

/**
 * POST /share never accepts fields that could not be completed (issue 24): each field's `pages` exist
 * in the document (when its page count is known), and a `required` field belongs to at least one
 * recipient who can answer it: a signer for signature-like fields and text fields (answered in the
 * sign call), any recipient owing an action for an `annotation_submitted_file` field (answered by
 * POST /share/upload/submittedFile). A required stamp or image field is refused too: the signer's
 * page could not complete it (issue 25). And every field goes only to recipients the signer's page
 * shows it to (issue 40): signers, or for a file field anyone owing an action. 400 naming the field
 * otherwise.
 */
export function checkFieldsCompletable<T extends SignatureFieldInput>(
  fields: T[] | undefined,
  options: { pageCount: number | null; purposesOf: (field: T) => string[] },
): void {
  for (const [i, field] of (fields ?? []).entries()) {
    const at = `signatureFields[${i}]`;
    if (options.pageCount !== null && Array.isArray(field.pages)) {
      for (const [j, page] of (field.pages as number[]).entries()) {
        if (page > options.pageCount) {
          throw new ValidationError(
            `${at}.pages[${j}]`,
            `must be less than or equal to ${options.pageCount} (the document's page count)`,
          );
        }
      }
    }
    // Issue 40: what the API accepts for a recipient is shown to them. The signer's page shows fields
    // to signers only, and a file field to whoever owes an action (they submit it before acting).
    const file = field.subtype === SUBMITTED_FILE;
    const unseen = options.purposesOf(field).find((p) => !(file ? ACTION_PURPOSES : ['sign']).includes(p));
    if (unseen !== undefined) {
      throw new ValidationError(
        at,
        file
          ? `goes to a recipient asked to ${unseen}, who owes no action and could not submit its file`
          : `goes to a recipient asked to ${unseen}, who would never see it: only signers are shown fields (except file fields)`,
      );
    }
    if (field.required !== true || field.readOnly === true || importedKey(field) !== undefined) continue;
    if (NOT_ON_THE_PAGE.includes(String(field.type))) {
      throw new ValidationError(
        at,
        `is a required ${String(field.type)} field, which the signer's page cannot ask for: make it optional, or a signature or initials field`,
      );
    }
    const purposes = options.purposesOf(field);
    const answerable = file
      ? purposes.some((p) => ACTION_PURPOSES.includes(p))
      : (field.type === 'annotation' || SIGNER_TYPES.includes(String(field.type))) &&
        purposes.includes('sign');
    if (!answerable) {
      throw new ValidationError(
        at,
        file
          ? 'is required, but none of its recipients owes an action: no one could submit its file'
          : 'is required, but none of its recipients signs: no one could answer it',
      );
    }
  }
}

/** The subtype of a field that asks the recipient for a file (spec Sharing rule 5). */
export const SUBMITTED_FILE = 'annotation_submitted_file';

/** The `config` key naming the custom field an annotation field imports. */
export const IMPORTED_FIELD = 'importedField';

export type SignatureFieldInput = Record<string, unknown>;

/** A share's signature field as recipients and sharers see it: imported fields prefilled. */
export type SignatureFieldView = SignatureFieldInput & {
  text?: string;
  readOnly?: boolean;
  importedField?: { key: string; displayName: string; type: string };
};

function importedKey(field: SignatureFieldInput): unknown {
  return fieldConfig(field)?.[IMPORTED_FIELD];
}

/**
 * POST /share: every imported field is an `annotation` naming, by key, a custom field the document
 * has. Joi-style 400 otherwise, naming the field.
 */
export function checkImportedFields(
  fields: SignatureFieldInput[] | undefined,
  customFields: CustomField[],
): void {
  for (const [i, field] of (fields ?? []).entries()) {
    const key = importedKey(field);
    if (key === undefined) continue;
    const at = `signatureFields[${i}].config`;
    if (typeof key !== 'string') throw new ValidationError(`${at}`, `${IMPORTED_FIELD} must be a string`);
    if (field.type !== 'annotation') {
      throw new ValidationError(`${at}`, `${IMPORTED_FIELD} is allowed on annotation fields only`);
    }
    if (!customFields.some((f) => f.key === key)) {
      throw new ValidationError(
        at,
        `${IMPORTED_FIELD} must be one of the document's custom field keys [${customFields.map((f) => f.key).join(', ')}]`,
      );
    }
  }
}

/** The document's custom fields (spec Custom field), as stored. */
export async function documentCustomFields(db: Kysely<Database>, documentId: string): Promise<CustomField[]> {
  const row = await db
    .selectFrom('documents')
    .select('custom_fields')
    .where('id', '=', documentId)
    .executeTakeFirst();
  return readJson<CustomField[]>(row?.custom_fields, []);
}

/** The fields as shown: an imported field carries its custom field's value as read-only `text`. */
export function showShareFields(
  fields: SignatureFieldInput[],
  customFields: CustomField[],
): SignatureFieldView[] {
  return fields.map((field) => {
    const key = importedKey(field);
    const imported = typeof key === 'string' ? customFields.find((f) => f.key === key) : undefined;
    if (!imported) return field;
    return {
      ...field,
      text: imported.value,
      readOnly: true,
      importedField: { key: imported.key, displayName: imported.displayName, type: imported.type },
    };
  });
}

const HEX = /^#[0-9A-Fa-f]{6}$/;
const HEX_ALPHA = /^#[0-9A-Fa-f]{6}([0-9A-Fa-f]{2})?$/;
const ALIGNS = ['left', 'center', 'right'] as const;

/**
 * The texts a share writes into the document when its recipient signs: its read-only annotation
 * fields with a text (predefined, or imported from a custom field), each where the field is placed.
 */
export function fieldTexts(fields: SignatureFieldView[]): TextEntry[] {
  const texts: TextEntry[] = [];
  for (const field of fields) {
    if (field.type !== 'annotation' || field.readOnly !== true) continue;
    if (typeof field.text !== 'string' || field.text.trim() === '') continue;
    const position = field.position as TextEntry['position'];
    const align = ALIGNS.find((a) => a === field.align);
    texts.push({
      subtype: typeof field.subtype === 'string' ? field.subtype : 'annotation_generic',
      text: field.text,
      pages: Array.isArray(field.pages) && field.pages.length > 0 ? (field.pages as number[]) : [1],
      position,
      ...(align ? { align } : {}),
      ...(typeof field.fontSize === 'number' ? { fontSize: Math.min(144, Math.max(4, field.fontSize)) } : {}),
      ...(typeof field.bold === 'boolean' ? { bold: field.bold } : {}),
      ...(typeof field.color === 'string' && HEX.test(field.color) ? { color: field.color } : {}),
      ...(typeof field.backgroundColor === 'string' && HEX_ALPHA.test(field.backgroundColor)
        ? { backgroundColor: field.backgroundColor }
        : {}),
    });
  }
  return texts;
}

/**
 * A sign call's text annotations as they are written into the signer's own revision, with their
 * signature: answers to the share's value fields (field-types.ts) checked against their field and
 * turned into what is written (a select's label, a checked box's `X`), then the share's read-only
 * fields (predefined texts and imported custom fields) added. Required fields must be answered.
 */
export async function withShareFieldTexts(
  db: Kysely<Database>,
  share: ShareRow,
  request: { annotations?: TextEntry[] | undefined; signatures: SignatureEntry[] },
): Promise<TextEntry[] | undefined> {
  const { signatureFields: fields, dateFormat } = shareOptions(share);
  if (fields.length === 0) return request.annotations;
  const annotations = request.annotations ?? [];
  const answers = annotations.flatMap((annotation, i) => {
    const field = annotation.fieldId === undefined ? undefined : answeredField(fields, annotation.fieldId);
    if (!field) return [annotation];
    const context = { at: `annotations[${i}].text`, name: fieldName(field), dateFormat };
    const text = writtenAnswer(field, annotation.text, context);
    return text === undefined ? [] : [{ ...annotation, text }];
  });
  assertRequiredAnswered(fields, annotations, request.signatures);
  const texts = fieldTexts(showShareFields(fields, await documentCustomFields(db, share.document_id)));
  const written = [...answers, ...texts];
  return written.length === 0 && request.annotations === undefined ? undefined : written;
}

/** The field of the share that an answer names: one the signer fills in (not read-only, not imported). */
function answeredField(fields: SignatureFieldInput[], id: string): SignatureFieldInput | undefined {
  return fields.find((f) => f.type === 'annotation' && !isWrittenByShare(f) && namesField(f, id));
}

/**
 * Whether the share writes the field's text itself (a read-only `annotation`, predefined or imported
 * from a custom field), so that no recipient may fill it. Only annotation fields are read-only: the
 * signer's page asks for a signature, initials, stamp or image field whatever its `readOnly` says.
 */
export function isWrittenByShare(field: SignatureFieldInput): boolean {
  return field.type === 'annotation' && (field.readOnly === true || importedKey(field) !== undefined);
}

/** How messages name a field: its `customId` when it has one, else its `fieldId`. */
function fieldName(field: SignatureFieldInput): string {
  return typeof field.customId === 'string' && field.customId !== '' ? field.customId : fieldKey(field);
}

/**
 * Spec Sharing: required fields enforced. A `required` field the signer fills in (an `annotation`
 * field, not `annotation_submitted_file`, not read-only, not imported) must be answered in the sign
 * call by a text annotation whose `fieldId` names the field (its `fieldId`, or its `customId` when it
 * has one), with some text (a checkbox: `"true"`); a `required` initials field by a `signatures`
 * entry of type `initials`.
 */
function assertRequiredAnswered(
  fields: SignatureFieldInput[],
  annotations: TextEntry[],
  signatures: SignatureEntry[],
): void {
  for (const [index, field] of fields.entries()) {
    if (field.required !== true || field.readOnly === true) continue;
    const at = `signatureFields[${index}]`;
    if (field.type === 'initials' && !signatures.some((s) => s.type === 'initials')) {
      throw new ValidationError(at, 'is required: sign it with a "signatures" entry of type "initials"');
    }
    if (field.type !== 'annotation' || field.subtype === SUBMITTED_FILE) continue;
    if (importedKey(field) !== undefined) continue;
    const answered = annotations.some(
      (a) => a.fieldId !== undefined && namesField(field, a.fieldId) && answersRequired(field, a.text),
    );
    if (!answered) {
      const answer = `"annotations" with "fieldId": "${fieldName(field)}"`;
      throw new ValidationError(
        at,
        field.subtype === VALUE_SUBTYPES.checkbox
          ? `is required: the box must be checked (send ${answer} and "text": "true")`
          : `is required: send its text in ${answer}`,
      );
    }
  }
}

/**
 * Before a recipient signs or completes their action (spec Sharing: required fields enforced): each
 * `required` field of theirs with subtype `annotation_submitted_file` must have its file submitted
 * (POST /share/upload/submittedFile naming the field by `fieldId` or `customId`). 400 naming the field
 * otherwise.
 */
export async function assertRequiredFilesSubmitted(db: Kysely<Database>, share: ShareRow): Promise<void> {
  const fields = shareOptions(share).signatureFields;
  for (const [index, field] of fields.entries()) {
    if (field.required !== true || field.subtype !== SUBMITTED_FILE) continue;
    // Files of older shares were recorded under the field's customId.
    const keys = [fieldKey(field), typeof field.customId === 'string' ? field.customId : ''].filter(
      (k) => k !== '',
    );
    const submitted = keys.length
      ? await db
          .selectFrom('document_attachments')
          .select('file_id')
          .where('document_id', '=', share.document_id)
          .where('field_id', 'in', keys)
          .where('submitted', '=', 1)
          .executeTakeFirst()
      : undefined;
    if (!submitted) {
      throw new ValidationError(
        `signatureFields[${index}]`,
        `is required: submit its file with POST /share/upload/submittedFile ("fieldId": "${fieldKey(field)}") first`,
      );
    }
  }
}

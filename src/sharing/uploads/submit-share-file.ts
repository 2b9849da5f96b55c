import type { Deps } from '../../core/deps.js';
import { ValidationError } from '../../base/errors.js';
import type { RecipientCaller } from '../../core/access/recipient-caller.js';
import { fieldKey, namesField } from '../../core/sharing/share-fields.js';
import { shareOptions, type ShareRow } from '../../core/sharing/share-types.js';
import {
  addUploadToDocument,
  receiveShareUpload,
  type ReadUpload,
  type ShareUploadAnswer,
} from './share-upload.js';

/** The signature field subtype that asks the recipient for a file (spec Sharing rule 5). */
export const SUBMITTED_FILE_SUBTYPE = 'annotation_submitted_file';

/**
 * The share's field the upload answers, asking for a file: named by `fieldId` (the field's own
 * identity, or its `customId`) and/or `customId`; both given must name the same field. Answers how the
 * field is recorded (share-fields.ts `fieldKey`), or nothing when the form names no field yet.
 */
function submittedField(share: ShareRow, form: Record<string, string>): string | undefined {
  const named = (['fieldId', 'customId'] as const).flatMap((name) => {
    const id = form[name];
    if (id === undefined) return [];
    const field = shareOptions(share).signatureFields.find((f) => namesField(f, id));
    if (!field || field.subtype !== SUBMITTED_FILE_SUBTYPE) {
      throw new ValidationError(
        name,
        `must name a signature field of subtype ${SUBMITTED_FILE_SUBTYPE} of this share (its fieldId or customId)`,
      );
    }
    return [fieldKey(field)];
  });
  if (named.length === 2 && named[0] !== named[1]) {
    throw new ValidationError('fieldId', 'and "customId" name different fields');
  }
  return named[0];
}

/**
 * POST /share/upload/submittedFile (spec Sharing rule 5, Versioning 5: `submittedFiles`): the file a
 * recipient submits for one of their `annotation_submitted_file` signature fields, named by its
 * `fieldId` (or `customId`). It joins the document's `submittedFiles`; until the recipient acts, a new file
 * for the field replaces their own earlier one (issue 25), and what they submitted stays once they have.
 */
export async function submitShareFile(
  deps: Deps,
  caller: RecipientCaller,
  read: ReadUpload,
): Promise<ShareUploadAnswer> {
  const { upload, fields } = await receiveShareUpload(
    deps,
    caller,
    read,
    'share-submitted-file',
    (share, fieldsSoFar) => {
      submittedField(share, fieldsSoFar);
    },
  );
  const fieldId = submittedField(upload.share, fields);
  if (fieldId === undefined) throw new ValidationError('fieldId', 'is required');
  return addUploadToDocument(deps, caller, upload, {
    submittedField: fieldId,
    activityType: 'documentFileSubmitted',
  });
}

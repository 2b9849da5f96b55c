import type { Deps } from '../deps.js';
import { ValidationError } from '../errors.js';
import type { RecipientCaller } from '../sharing/recipient.js';
import { shareOptions, type ShareRow } from '../sharing/share-types.js';
import {
  addUploadToDocument,
  receiveShareUpload,
  type ReadUpload,
  type ShareUploadAnswer,
} from './share-upload.js';

/** The signature field subtype that asks the recipient for a file (spec Sharing rule 5). */
export const SUBMITTED_FILE_SUBTYPE = 'annotation_submitted_file';

/** `fieldId`, or its synonym `customId`: the `customId` of the signature field answered. */
function fieldOf(fields: Record<string, string>): string | undefined {
  const { fieldId, customId } = fields;
  if (fieldId !== undefined && customId !== undefined && fieldId !== customId) {
    throw new ValidationError('fieldId', 'and "customId" name different fields');
  }
  return fieldId ?? customId;
}

/** The field must be one of the share's own signature fields, asking for a file. */
function assertSubmittedField(share: ShareRow, fieldId: string): void {
  const field = shareOptions(share).signatureFields.find((f) => f.customId === fieldId);
  if (!field || field.subtype !== SUBMITTED_FILE_SUBTYPE) {
    throw new ValidationError(
      'fieldId',
      `must name a signature field of subtype ${SUBMITTED_FILE_SUBTYPE} of this share`,
    );
  }
}

/**
 * POST /share/upload/submittedFile (spec Sharing rule 5, Versioning 5: `submittedFiles`): the file a
 * recipient submits for one of their `annotation_submitted_file` signature fields, named by its
 * `customId`. It joins the document's `submittedFiles` and is immutable: a second file for the same
 * field is 409.
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
      const early = fieldOf(fieldsSoFar);
      if (early !== undefined) assertSubmittedField(share, early);
    },
  );
  const fieldId = fieldOf(fields);
  if (fieldId === undefined) throw new ValidationError('fieldId', 'is required');
  assertSubmittedField(upload.share, fieldId);
  return addUploadToDocument(deps, caller, upload, {
    submittedField: fieldId,
    activityType: 'documentFileSubmitted',
  });
}

import { appError, LimitExceeded, ValidationError } from '../base/errors.js';

/**
 * Typed errors of the PDF engine. Problems with what the caller sent are 400s (`ValidationError`),
 * so the HTTP layer maps them without knowing this module.
 *
 * ```ts
 * await annotatePdf({ pdf, images }).catch((error: unknown) => {
 *   if (error instanceof PositionOutOfRange) throw new ValidationError(`body.${error.path}`, problem);
 *   throw error;
 * });
 * ```
 */

/** Not a PDF, or a damaged/truncated one we cannot append to safely. */
export class PdfInvalid extends ValidationError {}

/**
 * What is wrong with a file whose cross-reference data cannot be trusted. Such files are repaired at
 * upload (repair-pdf.ts) and never signed as they are: an update appended to them would point back
 * into the damage.
 */
export const XREF_DAMAGE = {
  startxrefNowhere: 'its startxref does not point to a cross-reference section',
  xrefBroken: 'its cross-reference table does not match where its objects are',
} as const;

/**
 * The refusal of a damaged file, naming the damage.
 *
 * ```ts
 * throw damagedPdf(XREF_DAMAGE.xrefBroken);
 * ```
 */
export function damagedPdf(problem: string): PdfInvalid {
  return new PdfInvalid(`The PDF is damaged: ${problem}; repair it before signing`);
}

/** A PDF over one of `PDF_LIMITS` (pages, objects, decoded stream bytes): 413 LIMIT_EXCEEDED. */
export class PdfTooLarge extends LimitExceeded {}

/**
 * PDFs that need a password to open are refused: Signery has none to open them with. (Files encrypted
 * with an empty user password open without one, and are signed in place: pdf/encryption.ts.)
 */
export class PdfEncrypted extends ValidationError {
  constructor(message = 'The PDF is encrypted with a password to open it; upload it without the password') {
    super(message);
  }
}

/** A PDF whose permissions forbid annotations and form fields: it cannot be signed (pdf/encryption.ts). */
export class PdfRestricted extends ValidationError {
  constructor(
    message = 'The PDF’s permissions forbid adding annotations and form fields, and signing adds both; ask its author for a copy without that restriction',
  ) {
    super(message);
  }
}

/**
 * A position or page outside the document, named as the API's validation text names fields (spec:
 * Errors 2, `"signatures[0].position.percentX" must be less than or equal to 1`); a caller that
 * nests the engine's input in its own request names it again with its prefix (`field.path`).
 */
export class PositionOutOfRange extends ValidationError {
  readonly path: string;
  constructor(path: string, message: string) {
    super(path, message);
    this.path = path;
  }
}

/** An image that is neither a PNG nor a JPEG we can place (or is damaged). */
export class ImageInvalid extends ValidationError {}

/** A prepared signature that does not fit what is being finished (wrong file, already signed, ...). */
export class PreparedSignatureMismatch extends ValidationError {}

/** The CMS did not fit the space reserved in /Contents: a bug or an unusually large chain/timestamp. */
export class PlaceholderTooSmall extends appError(500, 'PLACEHOLDER_TOO_SMALL') {}

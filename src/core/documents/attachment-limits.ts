import { LimitExceeded } from '../../base/errors.js';

const MB = 1024 * 1024;
export const MAX_ATTACHMENTS = 20;
const HARD_TOTAL_BYTES = 1024 * MB;

/**
 * spec Limits: at most 20 attachments per document (hard), together at most the smaller of
 * 5 × dropZoneMaxSize and 1 GB.
 */
export function assertAttachmentLimits(count: number, totalBytes: number, dropZoneMaxSizeMb: number): void {
  if (count > MAX_ATTACHMENTS) {
    throw new LimitExceeded(`A document has at most ${MAX_ATTACHMENTS} attachments (${count} requested)`);
  }
  const cap = Math.min(5 * dropZoneMaxSizeMb * MB, HARD_TOTAL_BYTES);
  if (totalBytes > cap) {
    throw new LimitExceeded(
      `Attachments of a document total at most ${cap / MB} MB (${Math.ceil(totalBytes / MB)} MB requested)`,
    );
  }
}

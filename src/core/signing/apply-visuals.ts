import type { Deps } from '../deps.js';
import { ValidationError } from '../../base/errors.js';
import { annotatePdf } from '../../pdf/annotate-pdf.js';
import type { PadesLevel, SignPdfResult } from '../../pdf/sign-pdf.js';
import { sealBytes } from './seal.js';
import {
  resolveVisuals,
  type Placer,
  type ResolvedVisuals,
  type VisualClaims,
  type VisualRequest,
} from './visual-input.js';

export interface AppliedVisuals {
  /** The next main file: one incremental update over the given bytes. */
  pdf: Uint8Array;
  visuals: ResolvedVisuals;
  /** The signature that closed the revision; absent for an annotate. */
  signature?: SignPdfResult;
}

/** Who a signature is made for, and at which level. */
export interface SignAs {
  signerName: string;
  level: PadesLevel;
  /** The `signatureProvider` whose key signs; by default the installation's. */
  provider?: string | undefined;
}

export interface ApplyVisualsOptions {
  pdf: Uint8Array;
  placer: Placer;
  request: VisualRequest;
  /** Images of `stamp` entries, loaded before the transaction (loadStampImages). */
  stamps?: Map<number, Uint8Array> | undefined;
  document: { id: string; title: string; barcodeFileId: string | null };
  /** Close the revision with a signature; without it, an annotate. */
  sign?: SignAs | undefined;
  /** The annotations' author when nothing is signed. */
  author: string;
  fieldPrefix?: string | undefined;
  now: Date;
}

/**
 * The one engine behind every call that draws on a document (spec Files usage rule 3: sign, annotate,
 * and the calls that sign inside them), reading only, with no transaction open (DESIGN: remote calls
 * never run inside a database transaction; core/signing/signer-change.ts is the road every signer's
 * change takes): resolves the request's `signatures`, `images` and `annotations`, draws them as
 * annotations with their own appearance streams, and either closes the revision with a PAdES signature
 * made with the organisation key in `sign.signerName`'s name, or, without `sign`, writes an annotate (no
 * signature). The upload files it uses are returned as `claims`, for the transaction that commits the
 * file (`claimVisualFiles`). Errors the engine raises about a field (a page past the end, an unreadable
 * image) read like the API's validation text, with `fieldPrefix` in front of the field (`optionalData.`
 * for POST /documents).
 */
export async function drawVisuals(
  deps: Deps,
  options: ApplyVisualsOptions & { sign: SignAs },
): Promise<AppliedVisuals & { signature: SignPdfResult; claims: VisualClaims }>;
export async function drawVisuals(
  deps: Deps,
  options: ApplyVisualsOptions,
): Promise<AppliedVisuals & { claims: VisualClaims }>;
export async function drawVisuals(
  deps: Deps,
  options: ApplyVisualsOptions,
): Promise<AppliedVisuals & { claims: VisualClaims }> {
  const { visuals, claims } = await resolveVisuals(deps.db, deps, {
    ...(options.stamps ? { stamps: options.stamps } : {}),
    placer: options.placer,
    request: options.request,
    document: options.document,
    fieldPrefix: options.fieldPrefix,
    now: options.now,
  });
  try {
    if (!options.sign) {
      const pdf = await annotatePdf({
        pdf: options.pdf,
        ...visuals,
        author: options.author,
        time: options.now,
      });
      return { pdf, visuals, claims };
    }
    const signature = await sealBytes(deps, {
      operation: 'sign',
      pdf: options.pdf,
      signerName: options.sign.signerName,
      level: options.sign.level,
      provider: options.sign.provider,
      visuals,
    });
    return { pdf: signature.pdf, visuals, signature, claims };
  } catch (error) {
    throw asRequestError(error, options.fieldPrefix ?? '');
  }
}

/**
 * How a drawn revision is recorded when it becomes the main file (replaceMainFile): closed by a
 * signature it is `documentSigned`, with the level the signature achieved; without one it is an
 * annotate, `documentAnnotated` with the event `documentEdited`.
 */
export function drawnChange(applied: Pick<AppliedVisuals, 'visuals' | 'signature'>) {
  const { signature, visuals } = applied;
  return signature
    ? {
        signed: true,
        activityType: 'documentSigned',
        event: 'documentSigned' as const,
        reason: 'signed',
        data: { levelAchieved: signature.levelAchieved, fellBack: signature.fellBack },
        archive: signature.archive,
      }
    : {
        signed: false,
        activityType: 'documentAnnotated',
        event: 'documentEdited' as const,
        reason: 'annotated',
        data: { images: visuals.images.length, annotations: visuals.annotations.length },
      };
}

/**
 * The PDF engine names the offending field as `"signatures[0].pages[0]" must be less than or equal
 * to 2`; the API says where it sits in the request (spec Errors 2).
 */
function asRequestError(error: unknown, fieldPrefix: string): unknown {
  if (!(error instanceof ValidationError) || !error.field) return error;
  return new ValidationError(`${fieldPrefix}${error.field.path}`, error.field.problem, { cause: error });
}

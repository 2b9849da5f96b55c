import { PdfDict, PdfName, PdfStream, PdfString, type PdfRef } from '@libpdf/core';
import { digest, type DigestAlgorithm } from '../pki/algorithms.js';
import { buildSignedAttributes } from '../pki/cms/signed-attributes.js';
import { CertificateInvalid } from '../pki/errors.js';
import type { KeyAlgorithm } from '../pki/signers/signer.js';
import { publicKeyOf } from '../pki/verify-signature-value.js';
import { appendPageAnnotations, pdfDate } from './annotations.js';
import { associatedFiles, type FileToEmbed } from './embedded-files.js';
import { updatePdf, type AppendablePdf } from './appendable-pdf.js';
import { settleNeedAppearances } from './form-appearances.js';
import { pageGeometries, rectArray } from './geometry.js';
import type { PreparedSignatureState } from './prepared-signature.js';
import { appendedSource, sourceOf, type PdfBytes } from './reader/byte-source.js';
import { addSignatureField, hasSignedField } from './signature-field.js';
import { buildAnnotations } from './visuals/build-annotations.js';
import type { ImageVisual, SignatureVisual, TextAnnotation } from './visuals/visual-types.js';
import { IncrementalUpdate, wholeFile, type WrittenUpdate } from './writer/incremental-writer.js';
import {
  byteRangeDigest,
  fillByteRange,
  signatureDictionary,
  type ByteRange,
} from './writer/signature-placeholder.js';

/** DESIGN: reserve 16 KB or more; B-T adds a timestamp token with the TSA's chain. */
export const MIN_PLACEHOLDER_SIZE = 16 * 1024;

export interface PrepareSignatureOptions {
  /** The file, in memory or read where it is (a stored file on disk, read lazily). */
  pdf: PdfBytes;
  /** The signer's certificate (DER) and chain, embedded in the CMS. */
  certificate: Uint8Array;
  chain?: Uint8Array[];
  /** Display name written as the signature dictionary's /Name (and drawn when a visual has no image). */
  signerName: string;
  /** The claimed signing time, written as /M (PAdES: no signing-time attribute). */
  signingTime: Date;
  reason?: string;
  location?: string;
  contactInfo?: string;
  digestAlgorithm?: DigestAlgorithm;
  /** Visuals of this signer, in the same revision as the signature (DESIGN). */
  signatures?: SignatureVisual[];
  images?: ImageVisual[];
  annotations?: TextAnnotation[];
  /** Bytes reserved for the CMS (default 16 KB; more when a timestamp will be embedded). */
  placeholderSize?: number;
  /**
   * Files the signature carries and covers (the audit trail of a seal on completion): associated
   * files of its widget's appearance (`/AP /N /AF`, ISO 32000-2 14.13), an empty one when the
   * signature is invisible. Nothing else in the document changes, so validators that judge the
   * revision after earlier signatures see a new signature field and what its appearance holds.
   */
  associatedFiles?: FileToEmbed[];
  /**
   * Revocation data of the signer's chain, fetched before signing: signed with the signature as the
   * adbe-revocationInfoArchival attribute, so the file proves the status (issue 38).
   */
  revocation?: { crls: Uint8Array[]; ocsps: Uint8Array[] };
}

export interface PreparedSignature {
  /** The PDF with the new revision; /Contents is still zeros. */
  pdf: Uint8Array;
  state: PreparedSignatureState;
  /** What the signer should know of the revision (visuals strict validators will refuse). */
  warnings: string[];
}

/**
 * First half of signing: appends one incremental update holding the signer's visuals (annotations
 * with appearance streams), a signature field whose widget shows the first visual, and a signature
 * dictionary (SubFilter ETSI.CAdES.detached) with placeholders (for a document's first signature, also
 * the form appearances `/NeedAppearances` asked viewers to draw); then computes the digest of the
 * signed byte ranges and the CMS signed attributes over it. Nothing here needs the private key, so
 * two-step signing sends `state.digest` to the signer and finishes later with `finishSignature`.
 *
 * ```ts
 * const prepared = await prepareSignature({ pdf, certificate, chain, signerName: 'Ada Lovelace', signingTime: new Date() });
 * const signatureValue = await signer.sign({ data: prepared.state.signedAttributes, digestAlgorithm: 'SHA-256' });
 * const { pdf: signed } = await finishSignature({ pdf: prepared.pdf, prepared: prepared.state, signatureValue });
 * ```
 */
export async function prepareSignature(options: PrepareSignatureOptions): Promise<PreparedSignature> {
  const { written, state, warnings } = await prepareSignatureUpdate(options);
  return { pdf: wholeFile(written), state, warnings };
}

/**
 * `prepareSignature` without the copy: the update as laid out after the file it extends, for a caller
 * that finishes it in place (signPdf). A file read from disk is never held whole: the byte ranges are
 * hashed as they are read.
 *
 * ```ts
 * const { written, state } = await prepareSignatureUpdate({ pdf: fileSource(fd, size), certificate, signerName, signingTime });
 * ```
 */
export async function prepareSignatureUpdate(
  options: PrepareSignatureOptions,
): Promise<{ written: WrittenUpdate; state: PreparedSignatureState; warnings: string[] }> {
  const digestAlgorithm = options.digestAlgorithm ?? 'SHA-256';
  const keyAlgorithm = keyAlgorithmOfCertificate(options.certificate);
  const { written, byteRange, fieldName, warnings } = await updatePdf(sourceOf(options.pdf), (opened) =>
    signatureUpdate(opened, options),
  );
  const messageDigest = await byteRangeDigest(
    digestAlgorithm,
    appendedSource(written.base, written.tail),
    byteRange,
  );
  const signedAttributes = buildSignedAttributes({
    messageDigest,
    certificate: options.certificate,
    ...(options.revocation ? { revocation: options.revocation } : {}),
  });
  return {
    written,
    warnings,
    state: {
      byteRange,
      signedAttributes,
      digest: digest(digestAlgorithm, signedAttributes),
      digestAlgorithm,
      certificate: options.certificate,
      chain: options.chain ?? [],
      keyAlgorithm,
      fieldName,
      signingTime: options.signingTime.toISOString(),
    },
  };
}

/** The signer's revision, laid out with its byte range filled in and /Contents still zeros. */
function signatureUpdate(
  opened: AppendablePdf,
  options: PrepareSignatureOptions,
): { written: WrittenUpdate; byteRange: ByteRange; fieldName: string; warnings: string[] } {
  const update = new IncrementalUpdate(opened);
  settleNeedAppearances({ opened, update });
  const pages = pageGeometries(opened);

  const built = buildAnnotations({
    update,
    pages,
    signatures: options.signatures,
    images: options.images,
    annotations: options.annotations,
    signerName: options.signerName,
    time: options.signingTime,
    locked: true,
    reserveWidget: true,
    // After another signature, this one's revision holds only its field and widget (and visuals on
    // other pages, which strict validators refuse: docs/signing-and-verification.md).
    composeOnWidgetPage: hasSignedField(opened),
  });

  const entries: Record<string, PdfString | PdfDict> = {
    M: pdfDate(options.signingTime),
    Name: PdfString.fromString(options.signerName),
  };
  if (options.reason) entries.Reason = PdfString.fromString(options.reason);
  if (options.location) entries.Location = PdfString.fromString(options.location);
  if (options.contactInfo) entries.ContactInfo = PdfString.fromString(options.contactInfo);
  entries.Prop_Build = PdfDict.of({ App: PdfDict.of({ Name: PdfName.of('Signery') }) });
  const appearance = carryFiles(update, built.widget?.appearance, options.associatedFiles);
  const signatureRef = update.allocate();
  const dictionary = signatureDictionary({
    type: 'Sig',
    subFilter: 'ETSI.CAdES.detached',
    contentsSize: Math.max(options.placeholderSize ?? MIN_PLACEHOLDER_SIZE, MIN_PLACEHOLDER_SIZE),
    entries,
    encryption: update.encryptionFor(signatureRef),
  });
  update.set(signatureRef, dictionary.body);
  const { fieldName } = addSignatureField({
    opened,
    update,
    pages,
    signature: signatureRef,
    namePrefix: 'Signature',
    widget: built.widget,
    ...(appearance ? { appearance } : {}),
    byPage: built.byPage,
  });
  appendPageAnnotations({ opened, update, pages, additions: built.byPage });

  const written = update.write();
  const byteRange = fillByteRange({ written, objectNumber: signatureRef.objectNumber, dictionary });
  const warnings = built.outsideWidget.length
    ? [
        `The visuals on page ${built.outsideWidget.map((i) => i + 1).join(', ')} are annotations of their own: this signature follows another and its widget, which holds its visuals, is on page ${(built.widget?.pageIndex ?? 0) + 1}. Validators applying a strict difference-analysis policy (pyHanko's default) refuse annotations added after a signature; a later signer's visuals on one page keep every validator's approval`,
      ]
    : [];
  return { written, byteRange, fieldName, warnings };
}

/**
 * Puts `files` on the signature's appearance as its associated files: on the visible widget's form
 * XObject, else on an empty one (a zero /BBox: nothing drawn) made for it. Answers the appearance an
 * invisible signature gets, if it gets one.
 */
function carryFiles(
  update: IncrementalUpdate,
  visible: PdfRef | undefined,
  files: FileToEmbed[] | undefined,
): PdfRef | undefined {
  if (!files?.length) return undefined;
  const appearance =
    visible ??
    update.add(
      PdfStream.fromDict(
        {
          Type: PdfName.of('XObject'),
          Subtype: PdfName.of('Form'),
          BBox: rectArray([0, 0, 0, 0]),
        },
        new Uint8Array(),
      ),
    );
  const form = update.get(appearance);
  if (!(form instanceof PdfStream)) throw new Error('The signature appearance is not a form XObject');
  form.set('AF', associatedFiles(update, files));
  update.set(appearance, form);
  return visible ? undefined : appearance;
}

function keyAlgorithmOfCertificate(certificate: Uint8Array): KeyAlgorithm {
  let type: string | undefined;
  try {
    type = publicKeyOf(certificate).asymmetricKeyType;
  } catch {
    throw new CertificateInvalid('The signer certificate cannot be read');
  }
  if (type === 'rsa') return 'RSA';
  if (type === 'ec') return 'ECDSA';
  throw new CertificateInvalid(`Unsupported certificate key type ${type ?? 'unknown'} (RSA or ECDSA only)`);
}

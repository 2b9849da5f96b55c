import type { PdfRef } from '@libpdf/core';
import type { DigestAlgorithm } from '../pki/algorithms.js';
import { requestTimestamp } from '../pki/tsa-client.js';
import { appendPageAnnotations } from './annotations.js';
import { updatePdf } from './appendable-pdf.js';
import type { TsaOptions } from './finish-signature.js';
import { pageGeometries } from './geometry.js';
import { appendedSource, sourceOf, type PdfBytes } from './reader/byte-source.js';
import { addSignatureField } from './signature-field.js';
import { IncrementalUpdate, wholeFile, type WrittenUpdate } from './writer/incremental-writer.js';
import {
  byteRangeDigest,
  embedInUpdate,
  fillByteRange,
  signatureDictionary,
} from './writer/signature-placeholder.js';

export interface AddDocumentTimestampOptions {
  pdf: PdfBytes;
  tsa: TsaOptions;
  digestAlgorithm?: DigestAlgorithm;
  /** Bytes reserved for the token (default 16 KB). */
  placeholderSize?: number;
}

export interface DocumentTimestamp {
  pdf: Uint8Array;
  genTime: Date;
  /** Certificates of the TSA (for a later DSS). */
  tsaCertificates: Uint8Array[];
  /** The certificate that signed the token, when the token carries it. */
  tsaCertificate?: Uint8Array;
  /** The token as embedded (its VRI key). */
  token: Uint8Array;
}

/** A document timestamp's update as laid out after the file it extends (documentTimestampUpdate). */
export interface DocumentTimestampUpdate extends Omit<DocumentTimestamp, 'pdf'> {
  written: WrittenUpdate;
}

/**
 * Adds a document timestamp (/Type /DocTimeStamp, SubFilter ETSI.RFC3161) in a new revision: the
 * archive timestamp of PAdES B-LTA, covering every earlier signature and the DSS. Throws
 * `TimestampUnavailable` when the TSA fails (DESIGN: never a fake timestamp).
 *
 * ```ts
 * const { pdf: archived } = await addDocumentTimestamp({ pdf, tsa: { url: config.tsaUrl } });
 * ```
 */
export async function addDocumentTimestamp(options: AddDocumentTimestampOptions): Promise<DocumentTimestamp> {
  const { written, ...timestamp } = await documentTimestampUpdate(options);
  return { ...timestamp, pdf: wholeFile(written) };
}

/**
 * `addDocumentTimestamp` without the copy: the update as laid out after the file it extends, the file
 * hashed as it is read.
 *
 * ```ts
 * const { written, token } = await documentTimestampUpdate({ pdf: appendedSource(original, appended), tsa });
 * ```
 */
export async function documentTimestampUpdate(
  options: AddDocumentTimestampOptions,
): Promise<DocumentTimestampUpdate> {
  const digestAlgorithm = options.digestAlgorithm ?? 'SHA-256';
  const { written, byteRange } = await updatePdf(sourceOf(options.pdf), (opened) => {
    const update = new IncrementalUpdate(opened);
    const pages = pageGeometries(opened);
    const dictionary = signatureDictionary({
      type: 'DocTimeStamp',
      subFilter: 'ETSI.RFC3161',
      contentsSize: options.placeholderSize ?? 16 * 1024,
    });
    const signatureRef = update.add(dictionary.body);
    const byPage = new Map<number, PdfRef[]>();
    addSignatureField({ opened, update, pages, signature: signatureRef, namePrefix: 'DocTimeStamp', byPage });
    appendPageAnnotations({ opened, update, pages, additions: byPage });
    const laidOut = update.write();
    return {
      written: laidOut,
      byteRange: fillByteRange({ written: laidOut, objectNumber: signatureRef.objectNumber, dictionary }),
    };
  });
  const { token, info } = await requestTimestamp({
    url: options.tsa.url,
    timeoutMs: options.tsa.timeoutMs,
    headers: options.tsa.headers,
    observe: options.tsa.observe,
    digest: await byteRangeDigest(digestAlgorithm, appendedSource(written.base, written.tail), byteRange),
    digestAlgorithm,
  });
  embedInUpdate({ written, byteRange, der: token });
  return {
    written,
    genTime: info.genTime,
    tsaCertificates: info.certificates,
    ...(info.tsaCertificate ? { tsaCertificate: info.tsaCertificate } : {}),
    token,
  };
}

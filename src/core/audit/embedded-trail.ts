import { createHash } from 'node:crypto';
import { readEmbeddedFiles, type FileToEmbed } from '../../pdf/embedded-files.js';
import { pdfBytes, type AppendablePdf } from '../../pdf/appendable-pdf.js';
import type { SignatureCheck } from '../../pdf/verify-pdf.js';
import { chainHash } from './chain.js';
import { TRAIL_FORMAT, trailPages, type DocumentTrail } from './document-trail.js';

/** The names a document's audit trail has inside its final PDF. */
export const TRAIL_FILES = { json: 'signery-audit-trail.json', pages: 'signery-audit-trail.pdf' } as const;

/**
 * A document's audit trail as the files its seal on completion carries: the JSON (checkable by
 * `signery verify` with no server) and the same trail as pages people read. The seal puts them on its
 * own appearance, in its own revision (prepare-signature.ts, `associatedFiles`): the seal's signature
 * covers them, and no revision sits between the users' signatures and the seal. Validators that judge
 * what changed after a signature (pyHanko's difference analysis) allow a new signature field and
 * whatever its appearance holds, where they hold the catalog's /Names and /AF unchanged: a revision
 * of attachments before the seal, as documents sealed before issue 38 have, turned every user's
 * signature invalid there. checkEmbeddedTrail reads both.
 *
 * ```ts
 * const sealed = await sealBytes(deps, { ..., associatedFiles: await trailFiles(trail, now) });
 * ```
 */
export async function trailFiles(trail: DocumentTrail, now: Date): Promise<FileToEmbed[]> {
  return [
    {
      name: TRAIL_FILES.json,
      mimeType: 'application/json',
      bytes: new Uint8Array(Buffer.from(JSON.stringify(trail, null, 2))),
      description: `Audit trail of document ${trail.document.id} (${TRAIL_FORMAT})`,
      relationship: 'Supplement',
      modified: now,
    },
    {
      name: TRAIL_FILES.pages,
      mimeType: 'application/pdf',
      bytes: await trailPages(trail, 'Signery, on completion'),
      description: `Audit trail of document ${trail.document.id}, to read`,
      relationship: 'Supplement',
      modified: now,
    },
  ];
}

/** What the audit trail a PDF carries proves (see checkEmbeddedTrail). */
export interface TrailCheck {
  present: boolean;
  /** Covered by a valid signature, every event's hash recomputes, and the newest revision is in the file. */
  intact: boolean;
  /** The signature (field name) whose signed bytes hold this very trail. */
  coveredBy?: string;
  problems: string[];
  document?: { id: string; title: string };
  /** The tenant audit chain's head when the trail was made. */
  anchor?: { hash: string; records: number };
  events: { occurredAt: string; activityType: string; actor: string | null; hash: string; intact: boolean }[];
  /** The document's revisions as the trail lists them, and whether the file holds each as one of its own. */
  revisions: { revision: number; reason: string; sha256: string; inFile: boolean }[];
}

/**
 * Checks the audit trail embedded in a PDF, with nothing but the file: that a signature whose
 * digest and value are valid covers the trail (its signed bytes already hold the same JSON), that
 * each event's chain hash recomputes from its fields and the hash before it (a changed event breaks
 * its own hash), and that the document's revisions are in the file (each stored revision of an
 * incrementally signed document is a prefix of it; one replaced by a non-incremental change is
 * listed as not in the file). `signatures` are the file's verified signatures (verifyPdf), read from
 * the same opened PDF: it is parsed once for both.
 *
 * ```ts
 * const trail = await readPdf(bytes, async (opened) =>
 *   checkEmbeddedTrail(opened, (await verifyPdf({ pdf: opened })).signatures),
 * );
 * ```
 */
export async function checkEmbeddedTrail(
  opened: AppendablePdf,
  signatures: SignatureCheck[],
): Promise<TrailCheck> {
  const absent: TrailCheck = { present: false, intact: false, problems: [], events: [], revisions: [] };
  const json = await trailJson(opened);
  if (!json) return absent;
  const problems: string[] = [];
  let trail: DocumentTrail;
  try {
    trail = JSON.parse(Buffer.from(json).toString('utf8')) as DocumentTrail;
    if (trail.format !== TRAIL_FORMAT || !Array.isArray(trail.events) || !Array.isArray(trail.revisions)) {
      throw new Error(`not ${TRAIL_FORMAT}`);
    }
  } catch (error) {
    return {
      ...absent,
      present: true,
      problems: [`The audit trail cannot be read (${(error as Error).message})`],
    };
  }

  const coveredBy = await coveringSignature(opened, json, signatures);
  if (!coveredBy)
    problems.push('No valid signature covers the audit trail: it may have been added or changed since');

  const events = trail.events.map((e) => {
    let intact = false;
    try {
      intact =
        chainHash(e.prevHash, {
          id: e.id,
          tenantId: trail.tenantId,
          occurredAt: e.occurredAt,
          actorId: e.actorId,
          activityType: e.activityType,
          objectType: e.objectType,
          objectId: e.objectId,
          requestId: e.requestId,
          data: e.data,
        }) === e.hash;
    } catch {
      intact = false;
    }
    if (!intact) problems.push(`The event ${e.id} (${e.activityType}) does not match its chain hash`);
    return { occurredAt: e.occurredAt, activityType: e.activityType, actor: e.actorId, hash: e.hash, intact };
  });

  const prefixes = revisionDigests(pdfBytes(opened));
  const revisions = trail.revisions.map((r) => ({
    revision: r.revision,
    reason: r.reason,
    sha256: r.sha256,
    inFile: prefixes.has(r.sha256),
  }));
  const newest = revisions.at(-1);
  if (!newest) problems.push('The audit trail lists no revision of the document');
  else if (!newest.inFile) {
    problems.push(
      `The document's revision ${newest.revision} (SHA-256 ${newest.sha256}) is not in this file`,
    );
  }
  return {
    present: true,
    intact: problems.length === 0,
    ...(coveredBy ? { coveredBy } : {}),
    problems,
    document: { id: trail.document?.id, title: trail.document?.title },
    anchor: trail.anchor,
    events,
    revisions,
  };
}

/**
 * The trail's JSON a PDF carries: the one on the newest signature's appearance that has one (the
 * seal's, since issue 38), else the one of the catalog's EmbeddedFiles (documents sealed before).
 */
async function trailJson(pdf: Uint8Array | AppendablePdf): Promise<Uint8Array | undefined> {
  try {
    const trails = (await readEmbeddedFiles({ pdf })).filter((f) => f.name === TRAIL_FILES.json);
    return (trails.findLast((f) => f.field !== undefined) ?? trails[0])?.bytes;
  } catch {
    return undefined;
  }
}

/**
 * The newest intact signature whose signed revision already holds these exact trail bytes: the
 * file cut where that signature's signed bytes end is an earlier revision of it, read on its own
 * (the file itself, already read, when the signature covers all of it).
 */
async function coveringSignature(
  opened: AppendablePdf,
  json: Uint8Array,
  signatures: SignatureCheck[],
): Promise<string | undefined> {
  const bytes = pdfBytes(opened);
  const intact = signatures.filter((s) => s.byteRangeValid && s.digestValid && s.signatureValid);
  for (const signature of intact.reverse()) {
    const [, , start, length] = signature.byteRange;
    if (start === undefined || length === undefined) continue;
    const end = start + length;
    const signed = await trailJson(end >= bytes.length ? opened : bytes.subarray(0, end));
    if (signed && Buffer.compare(signed, json) === 0) return signature.fieldName;
  }
  return undefined;
}

/**
 * The SHA-256 of every revision of the file: each prefix ending at an end-of-file marker. One hash
 * runs along the file, and a copy of it is finished at each end (the prefixes grow one from the
 * other), so the file is hashed once rather than once per revision.
 */
function revisionDigests(pdf: Uint8Array): Set<string> {
  const digests = new Set<string>();
  const bytes = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  const running = createHash('sha256');
  let hashed = 0;
  const digestOfPrefix = (end: number): string => {
    running.update(bytes.subarray(hashed, end));
    hashed = end;
    return running.copy().digest('hex');
  };
  for (let at = bytes.indexOf('%%EOF'); at !== -1; at = bytes.indexOf('%%EOF', at + 5)) {
    let end = at + 5;
    digests.add(digestOfPrefix(end));
    if (bytes[end] === 0x0d) digests.add(digestOfPrefix(++end));
    if (bytes[end] === 0x0a) digests.add(digestOfPrefix(end + 1));
  }
  return digests;
}

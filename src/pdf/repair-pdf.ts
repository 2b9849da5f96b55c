import { randomBytes } from 'node:crypto';
import { constants, inflateSync } from 'node:zlib';
import { PdfInvalid } from './errors.js';
import { findSignatures } from './find-signatures.js';
import { hasEndMarker, openPdf, readStartxref, type OpenedPdf } from './open-pdf.js';
import { crossReferenceSection, type XrefEntry } from './writer/cross-reference.js';

export interface RepairedPdf {
  /** The file as it came, then a rebuilt cross-reference section that makes it whole. */
  bytes: Uint8Array;
  /** What was wrong, in words for the file record. */
  problem: string;
}

/**
 * Repairs a PDF whose cross-reference table is damaged (a `startxref` that points nowhere, offsets
 * shifted by bytes added or removed near the start), as qpdf, MuPDF and poppler do when they open
 * one (issue 23): the objects are found where they really are, and a complete cross-reference
 * section listing them is appended, with no /Prev, so readers never consult the damaged one again.
 * Every byte of the file stays where it was: the upload is a prefix of the repair. Answers undefined
 * when there is nothing to repair, or nothing this can repair: a file that is not a PDF or is cut off
 * (no `%%EOF`: a repair would hide what is missing), that needs a password, is over `PDF_LIMITS`, whose
 * objects cannot be found, or that carries a signature (a repair is a change after it).
 *
 * ```ts
 * const repaired = await repairPdf(bytes);
 * if (repaired) store(repaired.bytes, { repair: repaired.problem });
 * ```
 */
export async function repairPdf(bytes: Uint8Array): Promise<RepairedPdf | undefined> {
  if (!hasEndMarker(bytes)) return undefined;
  try {
    await openPdf({ bytes });
    return undefined;
  } catch (error) {
    // Not damaged but refused (encrypted with a password, too large, ...): not for a repair.
    if (!(error instanceof PdfInvalid)) return undefined;
  }
  // openPdf refused it for damage and measured it against PDF_LIMITS on the way, so the object
  // streams decoded below are within those limits.
  const section = rebuiltSection(bytes);
  if (!section) return undefined;
  const repaired = new Uint8Array(Buffer.concat([Buffer.from(bytes), section]));
  let opened: OpenedPdf;
  try {
    opened = await openPdf({ bytes: repaired });
  } catch {
    return undefined;
  }
  if (findSignatures({ opened }).length > 0) return undefined;
  return {
    bytes: repaired,
    problem:
      readStartxref(bytes) === undefined
        ? 'The startxref did not point to a cross-reference section; the cross-reference table was rebuilt'
        : 'The cross-reference table did not match where the objects are; it was rebuilt',
  };
}

/** What the trailer of the rebuilt section carries over from the file's own. */
interface TrailerFound {
  root: string;
  info?: string;
  encrypt?: string;
  id?: string;
}

const WHITESPACE = '[\\0\\t\\n\\f\\r ]';
const OBJECT_HEADER = new RegExp(`(\\d{1,10})${WHITESPACE}+(\\d{1,5})${WHITESPACE}+obj(?![A-Za-z0-9])`, 'g');
const TOKEN_BOUNDARY = /[\0\t\n\f\r ()<>[\]{}/%]/;
const REF = (key: string) => new RegExp(`/${key}${WHITESPACE}*(\\d+${WHITESPACE}+\\d+${WHITESPACE}+R)`);

/**
 * The cross-reference section and trailer for the objects the file holds, scanned in file order (a
 * later definition of a number wins, as in an incremental update); undefined when no catalog is
 * found. Objects packed in object streams are listed too, in a cross-reference stream.
 */
function rebuiltSection(bytes: Uint8Array): Buffer | undefined {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const entries = new Map<number, XrefEntry>();
  const trailers: { at: number; found: TrailerFound }[] = [];
  let catalog: string | undefined;

  OBJECT_HEADER.lastIndex = 0;
  for (let match = OBJECT_HEADER.exec(text); match; match = OBJECT_HEADER.exec(text)) {
    const at = match.index;
    if (at > 0 && !TOKEN_BOUNDARY.test(text[at - 1]!)) {
      OBJECT_HEADER.lastIndex = at + 1;
      continue;
    }
    const number = Number(match[1]);
    const generation = Number(match[2]);
    const bodyStart = at + match[0].length;
    const endobj = text.indexOf('endobj', bodyStart);
    const stream = streamAfter(text, bodyStart, endobj);
    entries.set(number, { type: 'inUse', offset: at, generation });
    if (stream) {
      const dict = text.slice(bodyStart, stream.keyword);
      if (/\/Type\s*\/ObjStm\b/.test(dict)) {
        const members = objectStreamMembers(dict, bytes.subarray(stream.data, stream.end));
        for (const [index, member] of members.entries())
          entries.set(member, { type: 'compressed', stream: number, index });
      }
      if (/\/Type\s*\/XRef\b/.test(dict)) {
        const found = trailerEntries(dict);
        if (found) trailers.push({ at, found });
      }
      OBJECT_HEADER.lastIndex = stream.end;
    } else {
      const body = text.slice(bodyStart, endobj === -1 ? text.length : endobj);
      if (/\/Type\s*\/Catalog\b/.test(body)) catalog = `${number} ${generation} R`;
      OBJECT_HEADER.lastIndex = endobj === -1 ? bodyStart : endobj + 6;
    }
  }
  for (let at = text.indexOf('trailer'); at !== -1; at = text.indexOf('trailer', at + 7)) {
    const start = text.indexOf('<<', at);
    const dict = start === -1 ? undefined : dictionaryText(text, start);
    const found = dict && trailerEntries(dict);
    if (found) trailers.push({ at, found });
  }
  trailers.sort((a, b) => a.at - b.at);
  const exists = (ref: string) => entries.has(Number(ref.split(/\s+/)[0]));
  const trailer =
    trailers.reverse().find((t) => exists(t.found.root))?.found ?? (catalog && { root: catalog });
  if (!trailer || entries.size === 0) return undefined;
  // The key of an encrypted file derives from its first ID: keep it, or give up.
  if (trailer.encrypt && !trailer.id) return undefined;

  const size = Math.max(...entries.keys()) + 1;
  entries.set(0, { type: 'free', nextFree: 0, generation: 65535 });
  const compressed = [...entries.values()].some((e) => e.type === 'compressed');
  if ([...entries.values()].some((e) => e.type === 'compressed' && e.index > 0xffff)) return undefined;
  const last = bytes[bytes.length - 1];
  const separator = last === 0x0a || last === 0x0d ? '' : '\n';
  const id = trailer.id ?? `[<${randomBytes(16).toString('hex')}> <${randomBytes(16).toString('hex')}>]`;
  return Buffer.concat([
    Buffer.from(separator, 'latin1'),
    crossReferenceSection({
      entries,
      trailer:
        `/Root ${trailer.root}` +
        (trailer.info ? ` /Info ${trailer.info}` : '') +
        (trailer.encrypt ? ` /Encrypt ${trailer.encrypt}` : '') +
        ` /ID ${id}`,
      offset: bytes.length + separator.length,
      size,
      asStream: compressed,
    }),
  ]);
}

/** The stream of the object whose body starts at `from`, if it has one before `endobj`. */
function streamAfter(
  text: string,
  from: number,
  endobj: number,
): { keyword: number; data: number; end: number } | undefined {
  const keyword = text.indexOf('stream', from);
  if (keyword === -1 || (endobj !== -1 && keyword > endobj)) return undefined;
  if (!/>>\s*$/.test(text.slice(Math.max(from, keyword - 64), keyword))) return undefined;
  let data = keyword + 'stream'.length;
  if (text[data] === '\r') data++;
  if (text[data] === '\n') data++;
  // The declared length when it is direct and lands on `endstream`; else the next `endstream`.
  const length = Number(/\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(text.slice(from, keyword))?.[1] ?? NaN);
  if (Number.isSafeInteger(length) && /^\s*endstream/.test(text.slice(data + length, data + length + 32)))
    return { keyword, data, end: data + length };
  const end = text.indexOf('endstream', data);
  return { keyword, data, end: end === -1 ? text.length : end };
}

/** The object numbers an object stream holds, in order (Flate-compressed or plain; others: none). */
function objectStreamMembers(dict: string, data: Uint8Array): number[] {
  const count = Number(/\/N\s+(\d+)/.exec(dict)?.[1] ?? 0);
  const first = Number(/\/First\s+(\d+)/.exec(dict)?.[1] ?? 0);
  const filter = /\/Filter\s*\[?\s*\/(\w+)\s*\]?/.exec(dict)?.[1];
  if (/\/DecodeParms/.test(dict) || (filter && filter !== 'FlateDecode')) return [];
  let decoded: Buffer;
  try {
    decoded = filter ? inflateSync(data, { finishFlush: constants.Z_SYNC_FLUSH }) : Buffer.from(data);
  } catch {
    return [];
  }
  const numbers = decoded.subarray(0, first).toString('latin1').trim().split(/\s+/).map(Number);
  const members: number[] = [];
  for (let i = 0; i < count && 2 * i < numbers.length; i++) {
    const member = numbers[2 * i]!;
    if (!Number.isSafeInteger(member)) return [];
    members.push(member);
  }
  return members;
}

/** /Root, /Info, /Encrypt and /ID of a trailer dictionary, written as they were; undefined without /Root. */
function trailerEntries(dict: string): TrailerFound | undefined {
  const root = REF('Root').exec(dict)?.[1];
  if (!root) return undefined;
  const found: TrailerFound = { root };
  const info = REF('Info').exec(dict)?.[1];
  if (info) found.info = info;
  const encrypt = REF('Encrypt').exec(dict)?.[1];
  const encryptAt = dict.search(/\/Encrypt\s*<</);
  if (encrypt) found.encrypt = encrypt;
  else if (encryptAt !== -1) found.encrypt = dictionaryText(dict, dict.indexOf('<<', encryptAt));
  const id =
    /\/ID\s*\[\s*((?:<[0-9A-Fa-f\s]*>|\((?:\\.|[^\\)])*\))\s*(?:<[0-9A-Fa-f\s]*>|\((?:\\.|[^\\)])*\)))\s*\]/.exec(
      dict,
    );
  if (id) found.id = `[${id[1]}]`;
  return found;
}

/** The dictionary starting with `<<` at `start`, up to its matching `>>` (strings and nesting skipped). */
function dictionaryText(text: string, start: number): string | undefined {
  let depth = 0;
  const limit = Math.min(text.length, start + 64 * 1024);
  for (let i = start; i < limit; i++) {
    const c = text[i];
    if (c === '(') {
      let nesting = 1;
      for (i++; i < limit && nesting > 0; i++) {
        if (text[i] === '\\') i++;
        else if (text[i] === '(') nesting++;
        else if (text[i] === ')') nesting--;
      }
      i--;
    } else if (c === '<' && text[i + 1] === '<') {
      depth++;
      i++;
    } else if (c === '<') {
      i = text.indexOf('>', i);
      if (i === -1) return undefined;
    } else if (c === '>' && text[i + 1] === '>') {
      depth--;
      i++;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return undefined;
}

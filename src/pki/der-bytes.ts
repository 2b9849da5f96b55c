/**
 * DER written and walked as bytes, for the structures we build on every signature from parts that are
 * already encoded (certificates, signed attributes, a timestamp token). asn1js re-encodes a parsed tree
 * level by level, copying each level's bytes again: for a CMS with a certificate chain that was most
 * of a signature's encoding time. Here an already-encoded part is copied once.
 *
 * ```ts
 * const algorithm = sequence(oid('2.16.840.1.101.3.4.2.1'));
 * const [serial, , issuer] = children(tbsCertificate).slice(1);
 * ```
 */

/** A TLV with `tag` around the concatenated `parts` (definite length, as DER requires). */
export function tlv(tag: number, ...parts: Uint8Array[]): Uint8Array {
  let length = 0;
  for (const part of parts) length += part.length;
  const header = lengthHeader(tag, length);
  const out = new Uint8Array(header.length + length);
  out.set(header, 0);
  let at = header.length;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function lengthHeader(tag: number, length: number): Uint8Array {
  if (length < 0x80) return Uint8Array.of(tag, length);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Uint8Array.of(tag, 0x80 | bytes.length, ...bytes);
}

export const sequence = (...parts: Uint8Array[]): Uint8Array => tlv(0x30, ...parts);
export const set = (...parts: Uint8Array[]): Uint8Array => tlv(0x31, ...parts);
export const octetString = (bytes: Uint8Array): Uint8Array => tlv(0x04, bytes);
export const NULL = Uint8Array.of(0x05, 0x00);

/** A non-negative INTEGER below 128 (CMS versions). */
export function smallInteger(value: number): Uint8Array {
  if (!Number.isInteger(value) || value < 0 || value > 127) throw new RangeError(`${value} is not 0..127`);
  return Uint8Array.of(0x02, 0x01, value);
}

const oids = new Map<string, Uint8Array>();

/** An OBJECT IDENTIFIER from its dotted form. */
export function oid(dotted: string): Uint8Array {
  let encoded = oids.get(dotted);
  if (!encoded) {
    const arcs = dotted.split('.').map(Number);
    if (arcs.length < 2 || arcs.some((arc) => !Number.isSafeInteger(arc) || arc < 0)) {
      throw new RangeError(`${dotted} is not an object identifier`);
    }
    const body: number[] = [];
    for (const arc of [arcs[0]! * 40 + arcs[1]!, ...arcs.slice(2)]) {
      const base128: number[] = [arc % 128];
      for (let rest = Math.floor(arc / 128); rest > 0; rest = Math.floor(rest / 128)) {
        base128.unshift(0x80 | (rest % 128));
      }
      body.push(...base128);
    }
    encoded = tlv(0x06, Uint8Array.from(body));
    oids.set(dotted, encoded);
  }
  return encoded;
}

/** One TLV found in a buffer: its tag, where its content lies, and its whole encoding. */
export interface Tlv {
  tag: number;
  /** The whole TLV, header included (a view, not a copy). */
  bytes: Uint8Array;
  /** Its content octets (a view). */
  content: Uint8Array;
}

/** The TLV at `offset`; throws on a truncated value or an indefinite (BER-only) length. */
export function readTlv(bytes: Uint8Array, offset = 0): Tlv {
  if (offset + 2 > bytes.length) throw new RangeError('DER value truncated');
  const tag = bytes[offset]!;
  if ((tag & 0x1f) === 0x1f) throw new RangeError('DER multi-byte tags are not supported');
  let length = bytes[offset + 1]!;
  let header = 2;
  if (length >= 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new RangeError('DER length not definite or too long');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[offset + 2 + i] ?? 0);
    header += count;
  }
  const end = offset + header + length;
  if (end > bytes.length) throw new RangeError('DER value truncated');
  return { tag, bytes: bytes.subarray(offset, end), content: bytes.subarray(offset + header, end) };
}

/** The TLVs inside a constructed value's content. */
export function children(value: Tlv): Tlv[] {
  const found: Tlv[] = [];
  for (let at = 0; at < value.content.length;) {
    const child = readTlv(value.content, at);
    found.push(child);
    at += child.bytes.length;
  }
  return found;
}

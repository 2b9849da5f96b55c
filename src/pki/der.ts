import * as asn1js from 'asn1js';

/**
 * Small, typed readers over asn1js trees. pkijs covers the common structures; these cover what it
 * re-encodes (we need original bytes for certificates and signed attributes) or does not model.
 *
 * ```ts
 * const tstInfo = parseDer(content, 'TSTInfo');
 * const policy = oidOf(childAt(tstInfo, 1, 'policy'), 'policy');
 * ```
 */

export type Asn1 = asn1js.AsnType;

/** Parses one DER/BER value; `what` names it in the error. Trailing bytes are allowed (zero padding). */
export function parseDer(bytes: Uint8Array, what: string): Asn1 {
  const parsed = asn1js.fromBER(bytes);
  if (parsed.offset === -1 || parsed.result.error) throw new Error(`${what} is not valid DER`);
  return parsed.result;
}

/** The length of the first DER value in `bytes` (the /Contents of a signature is padded with zeros). */
export function derLength(bytes: Uint8Array): number {
  if (bytes.length < 2) return 0;
  const first = bytes[1]!;
  if (first < 0x80) return 2 + first;
  const count = first & 0x7f;
  // Indefinite lengths (0x80) are BER only; fall back to a full parse.
  if (count === 0) {
    const parsed = asn1js.fromBER(bytes);
    return parsed.offset === -1 ? 0 : parsed.offset;
  }
  let length = 0;
  for (let i = 0; i < count; i++) length = length * 256 + (bytes[2 + i] ?? 0);
  return 2 + count + length;
}

/** The elements of a constructed value (none for a primitive). */
export function childrenOf(node: Asn1): Asn1[] {
  const block = (node as asn1js.BaseBlock).valueBlock as { value?: unknown };
  return Array.isArray(block.value) ? (block.value as Asn1[]) : [];
}

/** The element at `index`; throws naming `what` when it is missing. */
export function childAt(node: Asn1, index: number, what: string): Asn1 {
  const child = childrenOf(node)[index];
  if (!child) throw new Error(`${what} is missing`);
  return child;
}

/** The bytes a value was decoded from (its whole TLV), as found in the input. */
export function originalBytes(node: Asn1): Uint8Array {
  return new Uint8Array((node as asn1js.BaseBlock).valueBeforeDecodeView);
}

/** Content octets of an OCTET STRING or implicitly tagged string, constructed (BER chunks) or not. */
export function octetsOf(node: Asn1): Uint8Array {
  const block = node as asn1js.BaseBlock;
  if (block.idBlock.isConstructed) {
    const parts = childrenOf(node).map(octetsOf);
    return new Uint8Array(Buffer.concat(parts));
  }
  const value = block.valueBlock as unknown as { valueHexView?: Uint8Array };
  return new Uint8Array(value.valueHexView ?? new Uint8Array(0));
}

/** The dotted value of an OBJECT IDENTIFIER. */
export function oidOf(node: Asn1, what: string): string {
  if (!(node instanceof asn1js.ObjectIdentifier)) throw new Error(`${what} is not an object identifier`);
  return node.getValue();
}

/** A small INTEGER as a number. */
export function integerOf(node: Asn1, what: string): number {
  if (!(node instanceof asn1js.Integer)) throw new Error(`${what} is not an integer`);
  return node.valueBlock.valueDec;
}

/** Whether a value is context-specific `[tag]`. */
export function isContext(node: Asn1 | undefined, tag: number): boolean {
  const block = node;
  return block?.idBlock.tagClass === 3 && block.idBlock.tagNumber === tag;
}

/** Encodes an asn1js or pkijs schema. */
export function toDer(node: { toBER(sizeOnly?: boolean): ArrayBuffer }): Uint8Array {
  return new Uint8Array(node.toBER(false));
}

/** Concatenates byte arrays. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(parts));
}

/** Byte-for-byte equality. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a).equals(Buffer.from(b));
}

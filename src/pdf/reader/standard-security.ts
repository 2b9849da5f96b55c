import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { PdfBool, PdfDict, PdfName, PdfNumber, PdfString, type PdfObject, type PdfRef } from '@libpdf/core';
import { NotReadableLazily } from './stream-data.js';

/** How one kind of data (strings, or streams) is encrypted: crypt filter methods of ISO 32000-2 7.6.5. */
type Method = 'none' | 'rc4' | 'aes128' | 'aes256';

type Direction = 'encrypt' | 'decrypt';

/** The padding string of the standard security handler (ISO 32000-2 7.6.4.3.2, Algorithm 2 step a). */
const PAD = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');

/**
 * The standard security handler (ISO 32000-2 7.6.4) of a file that opens with the empty user
 * password, which is what Signery signs in place (see encryption.ts): revisions 2–4 (RC4 and AES-128)
 * and 5–6 (AES-256). `open` authenticates with the empty password, as the user first and then as the
 * owner, the order @libpdf/core follows, so the same files open with the same permissions. Each
 * object's strings and streams are decrypted and encrypted with that object's key.
 *
 * ```ts
 * const security = StandardSecurity.open(encryptDict, firstId); // undefined: a password is needed
 * const clear = security?.string('decrypt', bytes, PdfRef.of(12, 0));
 * ```
 */
export class StandardSecurity {
  readonly #key: Uint8Array;
  readonly #strings: Method;
  readonly #streams: Method;
  readonly #encryptMetadata: boolean;
  /** /P: what a user who is not the owner may do (Table 22). */
  readonly permissions: number;
  /** Opened as the owner (empty owner password): every permission. */
  readonly isOwner: boolean;

  private constructor(options: {
    key: Uint8Array;
    strings: Method;
    streams: Method;
    encryptMetadata: boolean;
    permissions: number;
    isOwner: boolean;
  }) {
    this.#key = options.key;
    this.#strings = options.strings;
    this.#streams = options.streams;
    this.#encryptMetadata = options.encryptMetadata;
    this.permissions = options.permissions;
    this.isOwner = options.isOwner;
  }

  /**
   * Authenticates with the empty password; undefined when the file needs a password. A handler
   * other than /Standard, or an encryption this class does not know, is `NotReadableLazily`.
   */
  static open(dict: PdfDict, firstId: Uint8Array): StandardSecurity | undefined {
    const name = (key: string): string | undefined => {
      const value = dict.get(key);
      return value instanceof PdfName ? value.value : undefined;
    };
    const number = (key: string, fallback: number): number => {
      const value = dict.get(key);
      return value instanceof PdfNumber ? value.value : fallback;
    };
    const bytes = (key: string): Uint8Array => {
      const value = dict.get(key);
      return value instanceof PdfString ? value.bytes : new Uint8Array();
    };
    if (name('Filter') !== 'Standard') throw new NotReadableLazily(`the security handler ${name('Filter')}`);
    const v = number('V', 0);
    const r = number('R', 2);
    const metadata = dict.get('EncryptMetadata');
    const encryptMetadata = !(metadata instanceof PdfBool) || metadata.value;
    const permissions = number('P', 0) | 0;
    const methods = cryptMethods(dict, v);
    const o = bytes('O');
    const u = bytes('U');
    const common = { ...methods, encryptMetadata, permissions };
    if (r >= 5) {
      const user = keyR56({ r, hashOf: u, userKey: bytes('UE'), udata: new Uint8Array() });
      const owner = user
        ? undefined
        : keyR56({ r, hashOf: o, userKey: bytes('OE'), udata: u.subarray(0, 48) });
      const key = user ?? owner;
      if (!key || (r === 6 && !permsMatch(key, bytes('Perms'), permissions, encryptMetadata)))
        return undefined;
      return new StandardSecurity({ key, ...common, isOwner: !user });
    }
    if (r < 2 || r > 4) throw new NotReadableLazily(`security handler revision ${r}`);
    const length = r === 2 ? 5 : v === 4 ? 16 : number('Length', 40) / 8;
    const inputs = { r, length, o, u, permissions, firstId, encryptMetadata };
    const user = userKeyR2to4(PAD, inputs);
    if (user) return new StandardSecurity({ key: user, ...common, isOwner: false });
    const owner = userKeyR2to4(userPasswordFromOwner(inputs), inputs);
    return owner ? new StandardSecurity({ key: owner, ...common, isOwner: true }) : undefined;
  }

  /** A string of the object `ref`, decrypted or encrypted with that object's key. */
  string(direction: Direction, data: Uint8Array, ref: PdfRef): Uint8Array {
    return this.#crypt(direction, this.#strings, data, ref);
  }

  /**
   * Stream data of the object `ref`; cross-reference streams, and metadata when /EncryptMetadata is
   * false, stay in the clear.
   */
  stream(direction: Direction, data: Uint8Array, type: string | undefined, ref: PdfRef): Uint8Array {
    if (type === 'XRef' || (type === 'Metadata' && !this.#encryptMetadata)) return data;
    return this.#crypt(direction, this.#streams, data, ref);
  }

  #crypt(direction: Direction, method: Method, data: Uint8Array, ref: PdfRef): Uint8Array {
    if (method === 'none') return data;
    const { objectNumber, generation } = ref;
    const key =
      method === 'aes256' ? this.#key : objectKey(this.#key, objectNumber, generation, method === 'aes128');
    if (method === 'rc4') return rc4(key, data);
    const cipher = method === 'aes256' ? 'aes-256-cbc' : 'aes-128-cbc';
    if (direction === 'encrypt') {
      const iv = randomBytes(16);
      const encipher = createCipheriv(cipher, key, iv);
      return new Uint8Array(Buffer.concat([iv, encipher.update(data), encipher.final()]));
    }
    if (data.length < 32 || data.length % 16 !== 0) return data.length <= 16 ? new Uint8Array() : data;
    const decipher = createDecipheriv(cipher, key, data.subarray(0, 16));
    return new Uint8Array(Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]));
  }
}

/** The methods for strings and streams: V1–V2 RC4; V4–V5 named by /StrF and /StmF in /CF (7.6.5). */
function cryptMethods(dict: PdfDict, v: number): { strings: Method; streams: Method } {
  if (v === 1 || v === 2) return { strings: 'rc4', streams: 'rc4' };
  if (v !== 4 && v !== 5) throw new NotReadableLazily(`encryption version ${v}`);
  const filters = dict.get('CF');
  const method = (key: string): Method => {
    const chosen = dict.get(key);
    const filterName = chosen instanceof PdfName ? chosen.value : 'Identity';
    if (filterName === 'Identity') return 'none';
    const filter: PdfObject | undefined = filters instanceof PdfDict ? filters.get(filterName) : undefined;
    const cfm = filter instanceof PdfDict ? filter.get('CFM') : undefined;
    const value = cfm instanceof PdfName ? cfm.value : 'None';
    if (value === 'V2') return 'rc4';
    if (value === 'AESV2') return 'aes128';
    if (value === 'AESV3') return 'aes256';
    if (value === 'None') return 'none';
    throw new NotReadableLazily(`the crypt filter method ${value}`);
  };
  return { strings: method('StrF'), streams: method('StmF') };
}

interface R2to4 {
  r: number;
  length: number;
  o: Uint8Array;
  u: Uint8Array;
  permissions: number;
  firstId: Uint8Array;
  encryptMetadata: boolean;
}

/** Algorithms 2 and 4/5: the file key from a padded user password, when the password checks against /U. */
function userKeyR2to4(padded: Uint8Array, inputs: R2to4): Uint8Array | undefined {
  const { r, length, u } = inputs;
  const p = Buffer.alloc(4);
  p.writeInt32LE(inputs.permissions);
  const md5 = createHash('md5')
    .update(padded)
    .update(inputs.o.subarray(0, 32))
    .update(p)
    .update(inputs.firstId);
  if (r >= 4 && !inputs.encryptMetadata) md5.update(Buffer.from([0xff, 0xff, 0xff, 0xff]));
  let hash = md5.digest();
  if (r >= 3) for (let i = 0; i < 50; i++) hash = createHash('md5').update(hash.subarray(0, length)).digest();
  const key = new Uint8Array(hash.subarray(0, length));
  if (r === 2) return Buffer.from(rc4(key, PAD)).equals(Buffer.from(u.subarray(0, 32))) ? key : undefined;
  let check = rc4(key, createHash('md5').update(PAD).update(inputs.firstId).digest());
  for (let i = 1; i <= 19; i++)
    check = rc4(
      key.map((b) => b ^ i),
      check,
    );
  return Buffer.from(check).equals(Buffer.from(u.subarray(0, 16))) ? key : undefined;
}

/** Algorithm 7 with the empty owner password: the padded user password it unlocks from /O. */
function userPasswordFromOwner(inputs: R2to4): Uint8Array {
  let hash = createHash('md5').update(PAD).digest();
  if (inputs.r >= 3) for (let i = 0; i < 50; i++) hash = createHash('md5').update(hash).digest();
  const key = new Uint8Array(hash.subarray(0, inputs.length));
  if (inputs.r === 2) return rc4(key, inputs.o.subarray(0, 32));
  let user = inputs.o.subarray(0, 32);
  for (let i = 19; i >= 0; i--)
    user = rc4(
      key.map((b) => b ^ i),
      user,
    );
  return user;
}

/**
 * Algorithms 2.A/11/12 with the empty password: `hashOf` is /U or /O (hash, validation salt, key salt),
 * `userKey` /UE or /OE; answers the file key when the password checks.
 */
function keyR56(options: {
  r: number;
  hashOf: Uint8Array;
  userKey: Uint8Array;
  udata: Uint8Array;
}): Uint8Array | undefined {
  const { r, hashOf, udata } = options;
  if (hashOf.length < 48 || options.userKey.length < 32) return undefined;
  const hash = (salt: Uint8Array): Buffer => (r === 6 ? hash2B(salt, udata) : sha256(salt, udata));
  if (!hash(hashOf.subarray(32, 40)).equals(Buffer.from(hashOf.subarray(0, 32)))) return undefined;
  const decipher = createDecipheriv('aes-256-cbc', hash(hashOf.subarray(40, 48)), Buffer.alloc(16));
  decipher.setAutoPadding(false);
  return new Uint8Array(Buffer.concat([decipher.update(options.userKey.subarray(0, 32)), decipher.final()]));
}

function sha256(salt: Uint8Array, udata: Uint8Array): Buffer {
  return createHash('sha256').update(salt).update(udata).digest();
}

/** Algorithm 2.B (revision 6) with the empty password. */
function hash2B(salt: Uint8Array, udata: Uint8Array): Buffer {
  let k = sha256(salt, udata);
  for (let round = 0; ; round++) {
    const k1 = Buffer.concat(Array.from({ length: 64 }, () => Buffer.concat([k, udata])));
    const cipher = createCipheriv('aes-128-cbc', k.subarray(0, 16), k.subarray(16, 32));
    cipher.setAutoPadding(false);
    const e = Buffer.concat([cipher.update(k1), cipher.final()]);
    let sum = 0;
    for (let i = 0; i < 16; i++) sum += e[i]!;
    k = createHash(['sha256', 'sha384', 'sha512'][sum % 3]!)
      .update(e)
      .digest();
    if (round >= 63 && e[e.length - 1]! <= round - 31) return k.subarray(0, 32);
  }
}

/** Algorithm 13: /Perms decrypts to /P, the metadata flag and "adb" (revision 6). */
function permsMatch(
  key: Uint8Array,
  perms: Uint8Array,
  permissions: number,
  encryptMetadata: boolean,
): boolean {
  if (perms.length < 16) return false;
  const decipher = createDecipheriv('aes-256-ecb', key, null);
  decipher.setAutoPadding(false);
  const clear = Buffer.concat([decipher.update(perms.subarray(0, 16)), decipher.final()]);
  return (
    clear.toString('latin1', 9, 12) === 'adb' &&
    clear.readInt32LE(0) === permissions &&
    (clear[8] === 0x54) === encryptMetadata
  );
}

/** Algorithm 1: an object's key for RC4 and AES-128. */
function objectKey(fileKey: Uint8Array, objectNumber: number, generation: number, aes: boolean): Uint8Array {
  const suffix = Buffer.from([
    objectNumber & 0xff,
    (objectNumber >> 8) & 0xff,
    (objectNumber >> 16) & 0xff,
    generation & 0xff,
    (generation >> 8) & 0xff,
  ]);
  const md5 = createHash('md5').update(fileKey).update(suffix);
  if (aes) md5.update('sAlT', 'latin1');
  return new Uint8Array(md5.digest().subarray(0, Math.min(fileKey.length + 5, 16)));
}

/** RC4 (ARCFOUR), which the OpenSSL of recent Node versions no longer offers by default. */
function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const s = new Uint8Array(256);
  for (let i = 0; i < 256; i++) s[i] = i;
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = new Uint8Array(data.length);
  for (let n = 0, i = 0, j = 0; n < data.length; n++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[n] = data[n]! ^ s[(s[i]! + s[j]!) & 0xff]!;
  }
  return out;
}

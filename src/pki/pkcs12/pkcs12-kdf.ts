import { createHash } from 'node:crypto';

export interface Pkcs12KdfOptions {
  /** The password as a PKCS#12 BMPString: UTF-16BE with two zero bytes at the end. */
  password: Uint8Array;
  salt: Uint8Array;
  iterations: number;
  /** 1 = encryption key, 2 = IV, 3 = MAC key (RFC 7292 appendix B.3). */
  id: 1 | 2 | 3;
  length: number;
  hash: 'sha1' | 'sha256' | 'sha384' | 'sha512';
}

const BLOCK_SIZE: Record<Pkcs12KdfOptions['hash'], number> = {
  sha1: 64,
  sha256: 64,
  sha384: 128,
  sha512: 128,
};

/**
 * The PKCS#12 key derivation (RFC 7292 appendix B.2), used by legacy PBE ciphers and by the MAC that
 * proves a PKCS#12 password. Node has no built-in for it.
 *
 * ```ts
 * const key = pkcs12Kdf({ password: bmpPassword('pw'), salt, iterations: 2048, id: 1, length: 24, hash: 'sha1' });
 * ```
 */
export function pkcs12Kdf(options: Pkcs12KdfOptions): Uint8Array {
  const v = BLOCK_SIZE[options.hash];
  const d = new Uint8Array(v).fill(options.id);
  const repeat = (source: Uint8Array): Uint8Array => {
    if (source.length === 0) return new Uint8Array(0);
    const out = new Uint8Array(v * Math.ceil(source.length / v));
    for (let i = 0; i < out.length; i++) out[i] = source[i % source.length]!;
    return out;
  };
  const i = new Uint8Array([...repeat(options.salt), ...repeat(options.password)]);
  const result = new Uint8Array(options.length);
  let produced = 0;
  while (produced < options.length) {
    let a = new Uint8Array(createHash(options.hash).update(d).update(i).digest());
    for (let round = 1; round < options.iterations; round++) {
      a = new Uint8Array(createHash(options.hash).update(a).digest());
    }
    result.set(a.subarray(0, Math.min(a.length, options.length - produced)), produced);
    produced += a.length;
    if (produced >= options.length) break;
    // I_j = (I_j + B + 1) mod 2^(8v) for each v-byte block, B being A repeated to v bytes.
    const b = new Uint8Array(v);
    for (let k = 0; k < v; k++) b[k] = a[k % a.length]!;
    for (let block = 0; block < i.length; block += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const sum = i[block + k]! + b[k]! + carry;
        i[block + k] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return result;
}

/**
 * A password as PKCS#12 wants it for its own KDF: BMPString (UTF-16BE) plus a two-byte terminator.
 *
 * ```ts
 * bmpPassword('pw'); // 00 70 00 77 00 00
 * ```
 */
export function bmpPassword(password: string): Uint8Array {
  const out = new Uint8Array(password.length * 2 + 2);
  for (let i = 0; i < password.length; i++) {
    const code = password.charCodeAt(i);
    out[2 * i] = code >> 8;
    out[2 * i + 1] = code & 0xff;
  }
  return out;
}

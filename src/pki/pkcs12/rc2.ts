/**
 * RC2-CBC decryption (RFC 2268), pure JS. Node's OpenSSL 3 build has no RC2 (it lives in the legacy
 * provider), yet PKCS#12 files exported by Windows and OpenSSL 1.x encrypt their certificates with
 * pbeWithSHAAnd40BitRC2-CBC; reading them needs only decryption.
 *
 * ```ts
 * const plain = rc2CbcDecrypt({ key, effectiveBits: 40, iv, data });
 * ```
 */

// RFC 2268 section 2: PITABLE, a permutation of 0..255 derived from the digits of pi.
const PITABLE = Uint8Array.from(
  Buffer.from(
    'd978f9c419ddb5ed28e9fd794aa0d89dc67e37832b76538e624c6488448bfba2179a59f587b34f1361456d8d09817d32' +
      'bd8f40eb86b77b0bf09521225c6b4e8254d66593ce60b21c7356c014a78cf1dc1275ca1f3bbee4d1423dd430a33cb626' +
      '6fbf0eda4669075727f21d9bbc944303f811c7f690ef3ee706c3d52fc8661ed708e8eade8052eef784aa72ac354d6a2a' +
      '961ad2715a1549744b9fd05e0418a4ecc2e0416e0f51cbcc2491af50a1f47039997c3a8523b8b47afc02365b25559731' +
      '2d5dfa98e38a92ae05df2910676cbac9d300e6cfe19ea82c6316013f58e289a90d38341bab33ffb0bb480c5fb9b1cd2e' +
      'c5f3db47e5a59c770aa62068fe7fc1ad',
    'hex',
  ),
);

export interface Rc2CbcDecryptOptions {
  key: Uint8Array;
  /** Effective key length in bits (40 for the common legacy PKCS#12 cipher, 128 otherwise). */
  effectiveBits: number;
  iv: Uint8Array;
  data: Uint8Array;
}

/**
 * Decrypts RC2-CBC and removes the PKCS#7 padding; undefined when the padding is wrong (bad password).
 *
 * ```ts
 * const safeContents = rc2CbcDecrypt({ key, effectiveBits: 40, iv, data: encryptedContent });
 * ```
 */
export function rc2CbcDecrypt(options: Rc2CbcDecryptOptions): Uint8Array | undefined {
  const { data, iv } = options;
  if (data.length === 0 || data.length % 8 !== 0 || iv.length !== 8) return undefined;
  const k = expandKey(options.key, options.effectiveBits);
  const out = new Uint8Array(data.length);
  let previous = iv;
  for (let offset = 0; offset < data.length; offset += 8) {
    const block = data.subarray(offset, offset + 8);
    const plain = decryptBlock(k, block);
    for (let i = 0; i < 8; i++) out[offset + i] = plain[i]! ^ previous[i]!;
    previous = block;
  }
  const pad = out[out.length - 1]!;
  if (pad < 1 || pad > 8) return undefined;
  for (let i = out.length - pad; i < out.length; i++) if (out[i] !== pad) return undefined;
  return out.subarray(0, out.length - pad);
}

function expandKey(key: Uint8Array, effectiveBits: number): Uint16Array {
  const l = new Uint8Array(128);
  l.set(key);
  const t = key.length;
  for (let i = t; i < 128; i++) l[i] = PITABLE[(l[i - 1]! + l[i - t]!) & 255]!;
  const t8 = (effectiveBits + 7) >> 3;
  const tm = 255 >> (8 * t8 - effectiveBits);
  l[128 - t8] = PITABLE[l[128 - t8]! & tm]!;
  for (let i = 127 - t8; i >= 0; i--) l[i] = PITABLE[l[i + 1]! ^ l[i + t8]!]!;
  const k = new Uint16Array(64);
  for (let i = 0; i < 64; i++) k[i] = l[2 * i]! | (l[2 * i + 1]! << 8);
  return k;
}

const SHIFTS = [1, 2, 3, 5];

function decryptBlock(k: Uint16Array, block: Uint8Array): Uint8Array {
  const r = [0, 1, 2, 3].map((i) => block[2 * i]! | (block[2 * i + 1]! << 8));
  let j = 63;
  const mixRounds = (count: number): void => {
    for (let round = 0; round < count; round++) {
      for (let i = 3; i >= 0; i--) {
        const s = SHIFTS[i]!;
        let value = r[i]!;
        value = ((value >>> s) | (value << (16 - s))) & 0xffff;
        value =
          (value - k[j]! - (r[(i + 3) % 4]! & r[(i + 2) % 4]!) - (~r[(i + 3) % 4]! & r[(i + 1) % 4]!)) &
          0xffff;
        r[i] = value;
        j--;
      }
    }
  };
  const mash = (): void => {
    for (let i = 3; i >= 0; i--) r[i] = (r[i]! - k[r[(i + 3) % 4]! & 63]!) & 0xffff;
  };
  mixRounds(5);
  mash();
  mixRounds(6);
  mash();
  mixRounds(5);
  const out = new Uint8Array(8);
  for (let i = 0; i < 4; i++) {
    out[2 * i] = r[i]! & 0xff;
    out[2 * i + 1] = r[i]! >> 8;
  }
  return out;
}

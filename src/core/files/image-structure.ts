import { crc32 } from 'node:zlib';

/**
 * Whether bytes are, whole, a PNG or a JPEG image (DESIGN, files answered to a browser: "signature,
 * initials, stamp, photo and image uploads must decode as the image types they claim (PNG, JPEG; SVG
 * is refused)"). A file that merely starts like an image (PNG bytes followed by a page, issue 37) is
 * not one: a PNG is read chunk by chunk, each CRC checked, from IHDR to an IEND that ends the file; a
 * JPEG segment by segment, through its entropy-coded scans, to the EOI that ends its image (only
 * another JPEG may follow: the second pictures of a phone's multi-picture file). Sizes are bounded
 * before anything would be decoded. Linear in the bytes, no decoding of pixels.
 */
export type ImageStructure =
  | { ok: true; type: 'image/png' | 'image/jpeg'; width: number; height: number }
  | { ok: false; reason: string };

/** Larger images are refused: no signature, stamp or photo needs them, and decoders would. */
export const MAX_IMAGE_SIDE = 20_000;
export const MAX_IMAGE_PIXELS = 50_000_000;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function imageStructure(bytes: Buffer): ImageStructure {
  if (bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return png(bytes);
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return jpeg(bytes, 0, true);
  return { ok: false, reason: 'not a PNG or JPEG image' };
}

function sized(type: 'image/png' | 'image/jpeg', width: number, height: number): ImageStructure {
  if (width < 1 || height < 1) return { ok: false, reason: 'an image without pixels' };
  if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE || width * height > MAX_IMAGE_PIXELS)
    return { ok: false, reason: `an image of ${width} × ${height} pixels is too large` };
  return { ok: true, type, width, height };
}

function png(bytes: Buffer): ImageStructure {
  let at = 8;
  let header: { width: number; height: number } | undefined;
  let data = false;
  while (at + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(at);
    const end = at + 12 + length;
    if (length > 0x7fffffff || end > bytes.length)
      return { ok: false, reason: 'a PNG chunk runs past the end' };
    const type = bytes.toString('latin1', at + 4, at + 8);
    if (!/^[A-Za-z]{4}$/.test(type)) return { ok: false, reason: 'a PNG chunk without a name' };
    if (crc32(bytes.subarray(at + 4, at + 8 + length)) !== bytes.readUInt32BE(at + 8 + length))
      return { ok: false, reason: `the PNG chunk ${type} is damaged (CRC)` };
    if (header === undefined && type !== 'IHDR') return { ok: false, reason: 'a PNG must start with IHDR' };
    if (type === 'IHDR') {
      if (header !== undefined || length !== 13) return { ok: false, reason: 'a PNG with a bad IHDR' };
      header = { width: bytes.readUInt32BE(at + 8), height: bytes.readUInt32BE(at + 12) };
    }
    if (type === 'IDAT') data = true;
    at = end;
    if (type === 'IEND') {
      if (!data) return { ok: false, reason: 'a PNG without image data' };
      if (at !== bytes.length) return { ok: false, reason: 'bytes follow the end of the PNG image' };
      return sized('image/png', header!.width, header!.height);
    }
  }
  return { ok: false, reason: 'a PNG that does not end (no IEND)' };
}

/** Markers with no length: TEM and RST0–7 (inside scans); SOI and EOI are handled apart. */
const STANDALONE = new Set([0x01, 0xd0, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6, 0xd7]);

function jpeg(bytes: Buffer, start: number, first: boolean): ImageStructure {
  let at = start + 2;
  let frame: { width: number; height: number } | undefined;
  let scans = 0;
  for (;;) {
    // Fill bytes (0xFF repeated) may precede a marker.
    if (bytes[at] !== 0xff) return { ok: false, reason: 'a JPEG segment that is not one' };
    while (bytes[at] === 0xff) at += 1;
    if (at >= bytes.length) return { ok: false, reason: 'a JPEG that does not end (no EOI)' };
    const marker = bytes[at]!;
    at += 1;
    if (marker === 0xd9) break;
    if (STANDALONE.has(marker)) continue;
    if (marker === 0xd8 || marker === 0x00) return { ok: false, reason: 'a JPEG with a misplaced marker' };
    if (at + 2 > bytes.length) return { ok: false, reason: 'a JPEG segment runs past the end' };
    const length = bytes.readUInt16BE(at);
    if (length < 2 || at + length > bytes.length)
      return { ok: false, reason: 'a JPEG segment runs past the end' };
    const isFrame = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isFrame) {
      if (length < 8) return { ok: false, reason: 'a JPEG frame header too short' };
      frame = { height: bytes.readUInt16BE(at + 3), width: bytes.readUInt16BE(at + 5) };
    }
    at += length;
    if (marker === 0xda) {
      if (!frame) return { ok: false, reason: 'a JPEG scan before its frame' };
      scans += 1;
      // Entropy-coded data: a 0xFF in it is followed by 0x00 (a stuffed byte) or a restart marker.
      while (at < bytes.length) {
        if (bytes[at] === 0xff) {
          const next = bytes[at + 1];
          if (next === 0x00 || (next !== undefined && next >= 0xd0 && next <= 0xd7)) {
            at += 2;
            continue;
          }
          if (next === 0xff) {
            at += 1;
            continue;
          }
          break;
        }
        at += 1;
      }
      if (at >= bytes.length) return { ok: false, reason: 'a JPEG that does not end (no EOI)' };
    }
  }
  if (!frame || scans === 0) return { ok: false, reason: 'a JPEG without image data' };
  if (at < bytes.length && !bytes.subarray(at).every((byte) => byte === 0)) {
    // Only further JPEG images (multi-picture files) or zero padding may follow; anything else is not an image.
    if (!(bytes[at] === 0xff && bytes[at + 1] === 0xd8))
      return { ok: false, reason: 'bytes follow the end of the JPEG image' };
    const next = jpeg(bytes, at, false);
    if (!next.ok) return next;
  }
  return first
    ? sized('image/jpeg', frame.width, frame.height)
    : { ok: true, type: 'image/jpeg', width: frame.width, height: frame.height };
}

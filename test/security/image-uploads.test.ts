import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { before, describe, it } from 'node:test';
import { createCanvas } from '@napi-rs/canvas';
import { PNG_1PX } from '../helpers/pdf.js';
import { aUser, withMail } from '../helpers/people.js';
import { anExternalShare } from '../helpers/sharing.js';
import { useServer } from '../helpers/use-server.js';

/**
 * DESIGN, files answered to a browser: "signature, initials, stamp, photo and image uploads must decode
 * as the image types they claim (PNG, JPEG; SVG is refused)". Issue 37, item 1: a recipient's stamp of
 * PNG bytes followed by HTML was accepted. Every fixture is made here: a JPEG drawn by Skia, PNGs
 * altered byte by byte.
 */
describe('DESIGN: image uploads are whole PNG or JPEG images, nothing that merely starts like one', () => {
  const server = useServer({ smtp: true });
  let token: string;
  let link: string;
  before(async () => {
    token = (await aUser(server, withMail('imager'))).token;
    link = (
      await anExternalShare(server, token, { title: 'Images', pdf: null, email: 'stamper@example.org' })
    ).link;
  });

  const jpeg = (): Buffer => {
    const canvas = createCanvas(8, 8);
    const context = canvas.getContext('2d');
    context.fillStyle = '#c33';
    context.fillRect(0, 0, 8, 8);
    return canvas.toBuffer('image/jpeg');
  };
  const html = Buffer.from('<!doctype html><script>alert(document.domain)</script>');
  const badCrc = Buffer.from(PNG_1PX);
  badCrc[29] = badCrc[29]! ^ 0xff; // inside IHDR's CRC
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  /** A PNG whose IEND is missing: it does not end. */
  const truncated = PNG_1PX.subarray(0, PNG_1PX.length - 12);
  /** A PNG claiming 100,000 × 100,000 pixels (its IHDR CRC made right). */
  const huge = (() => {
    const bytes = Buffer.from(PNG_1PX);
    bytes.writeUInt32BE(100_000, 16);
    bytes.writeUInt32BE(100_000, 20);
    bytes.writeUInt32BE(crc32(bytes.subarray(12, 29)), 29);
    return bytes;
  })();

  const refused: [string, Buffer][] = [
    ['PNG bytes followed by a page', Buffer.concat([PNG_1PX, html])],
    ['a JPEG followed by a page', Buffer.concat([jpeg(), html])],
    ['an SVG', svg],
    ['a page', html],
    ['a PNG with a damaged chunk', badCrc],
    ['a PNG without its end', truncated],
    ['a PNG of ten billion pixels', huge],
    ['the first bytes of a PNG only', PNG_1PX.subarray(0, 8)],
  ];

  const routes: { path: string; as: 'user' | 'link' }[] = [
    { path: '/files/photo', as: 'user' },
    { path: '/files/signature', as: 'user' },
    { path: '/files/initials', as: 'user' },
    { path: '/share/upload/signature', as: 'link' },
    { path: '/share/upload/initials', as: 'link' },
    { path: '/share/upload/stamp', as: 'link' },
    // An image for `images` (without `attach`).
    { path: '/share/upload/file', as: 'link' },
  ];
  const send = (route: (typeof routes)[number], bytes: Buffer, type: string) =>
    server.api('POST', route.path, {
      token: route.as === 'user' ? token : link,
      form: {
        fields: route.path.endsWith('stamp') ? { name: 'Stamp' } : {},
        file: { name: 'image', type, bytes },
      },
    });

  it('every image upload refuses what is not a whole PNG or JPEG, whatever type was declared: 400', async () => {
    for (const route of routes) {
      for (const [what, bytes] of refused) {
        const answer = await send(route, bytes, 'image/png');
        assert.equal(answer.status, 400, `${route.path}, ${what}: ${answer.text}`);
        assert.match(answer.body.code, /^(VALIDATION_ERROR|FILE_NOT_USABLE)$/);
      }
    }
  });

  it('a PNG, a JPEG and a JPEG with zero padding after it are taken by every image upload', async () => {
    for (const route of routes) {
      for (const [what, bytes] of [
        ['PNG', PNG_1PX],
        ['JPEG', jpeg()],
        ['padded JPEG', Buffer.concat([jpeg(), Buffer.alloc(64)])],
      ] as const) {
        const answer = await send(route, bytes, 'application/octet-stream');
        assert.equal(answer.status, 200, `${route.path}, ${what}: ${answer.text}`);
      }
    }
  });
});

import { deflateSync } from 'node:zlib';
import { manyPagesPdf, onePagePdf } from '../fixtures/pdf-fixtures.js';

/**
 * PDFs an attacker or a broken client sends: generated here (DESIGN: fixtures are generated, not
 * downloaded), each named after what it tries to break. Built once per process: the bomb takes a
 * moment to compress.
 */
export interface HostilePdf {
  name: string;
  bytes: Buffer;
}

/** A PDF written object by object with a correct classic xref table around whatever the objects say. */
export function rawPdf(objects: (string | Buffer)[], trailerExtra = ''): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(length);
    const chunk = Buffer.concat([
      Buffer.from(`${i + 1} 0 obj\n`, 'latin1'),
      typeof body === 'string' ? Buffer.from(body, 'latin1') : body,
      Buffer.from('\nendobj\n', 'latin1'),
    ]);
    parts.push(chunk);
    length += chunk.length;
  });
  const xref = [
    'xref',
    `0 ${objects.length + 1}`,
    '0000000000 65535 f ',
    ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n `),
    'trailer',
    `<< /Size ${objects.length + 1} /Root 1 0 R ${trailerExtra}>>`,
    'startxref',
    String(length),
    '%%EOF',
    '',
  ].join('\n');
  parts.push(Buffer.from(xref, 'latin1'));
  return Buffer.concat(parts);
}

function stream(dict: string, data: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'),
    data,
    Buffer.from('\nendstream', 'latin1'),
  ]);
}

const PAGE_TREE = (contents: string) => [
  '<< /Type /Catalog /Pages 2 0 R >>',
  '<< /Type /Pages /Count 1 /Kids [3 0 R] >>',
  `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents ${contents} >>`,
];
const FONT = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';

/**
 * A page whose content stream inflates from about 16 KiB to `inflated` bytes (blanks, then one text
 * operator). Blanks rather than operators: a stream of 1 MiB of `BT … Tj ET` already keeps text
 * extraction busy for two minutes today, which would stall this whole suite (reported, issue 20).
 */
export function deflateBomb(inflated = 16 * 1024 * 1024): Buffer {
  const line = Buffer.from('BT /F1 12 Tf 72 700 Td (bomb) Tj ET\n', 'latin1');
  const data = Buffer.concat([Buffer.alloc(inflated, 0x20), line]);
  return rawPdf([
    ...PAGE_TREE('4 0 R'),
    stream('/Filter /FlateDecode', deflateSync(data, { level: 9 })),
    FONT,
  ]);
}

/** Every hostile PDF the suite sends; the truncated ones are cut from real fixtures. */
export function hostilePdfs(): HostilePdf[] {
  const one = Buffer.from(onePagePdf().bytes);
  const many = Buffer.from(manyPagesPdf(20, { objectStreams: true }).bytes);
  const deep = '['.repeat(100_000) + ']'.repeat(100_000);
  return [
    { name: 'truncated one-page PDF (half)', bytes: one.subarray(0, Math.floor(one.length / 2)) },
    { name: 'truncated one-page PDF (no trailer)', bytes: one.subarray(0, one.lastIndexOf('trailer')) },
    { name: 'truncated object-stream PDF', bytes: many.subarray(0, Math.floor(many.length * 0.8)) },
    { name: 'PDF header then nothing', bytes: Buffer.from('%PDF-1.7\n', 'latin1') },
    { name: 'deflate bomb in a content stream', bytes: deflateBomb() },
    {
      name: 'deflate bomb in an object stream',
      bytes: rawPdf([
        ...PAGE_TREE('[]'),
        stream(
          '/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode',
          deflateSync(Buffer.alloc(16 * 1024 * 1024, 0x20)),
        ),
        FONT,
      ]),
    },
    {
      name: 'page tree that contains itself',
      bytes: rawPdf(['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Count 1 /Kids [2 0 R] >>']),
    },
    {
      name: 'page tree claiming a billion pages',
      bytes: rawPdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        `<< /Type /Pages /Count 1000000000 /Kids [${Array.from({ length: 2000 }, () => '3 0 R').join(' ')}] >>`,
        '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>',
      ]),
    },
    { name: 'array nested 100 000 deep', bytes: rawPdf([...PAGE_TREE('4 0 R'), deep, FONT]) },
    {
      name: 'xref offsets pointing nowhere',
      bytes: Buffer.from(one.toString('latin1').replace(/(\d{10}) 00000 n/g, '9999999999 00000 n'), 'latin1'),
    },
    {
      name: 'stream Length far beyond the file',
      bytes: rawPdf([
        ...PAGE_TREE('4 0 R'),
        Buffer.from('<< /Length 99999999999 >>\nstream\nBT ET\nendstream', 'latin1'),
        FONT,
      ]),
    },
    {
      name: 'encrypted trailer with a bogus dictionary',
      bytes: rawPdf([...PAGE_TREE('[]'), FONT], '/Encrypt << /Filter /Standard /V 99 /R 99 >> '),
    },
    { name: 'garbage after a PDF header', bytes: Buffer.concat([Buffer.from('%PDF-1.4\n'), garbage(4096)]) },
    { name: 'not a PDF at all', bytes: garbage(2048) },
    { name: 'empty file', bytes: Buffer.alloc(0) },
  ];
}

/** Deterministic pseudo-random bytes (a fixed linear congruential sequence, not Math.random). */
export function garbage(length: number, seed = 7): Buffer {
  const out = Buffer.alloc(length);
  let x = seed >>> 0;
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

// Compresses the built page's text files once, at build time: `<file>.br` (brotli at its best
// quality, too slow to run on a request) and `<file>.gz` beside each, which the server sends to
// browsers that accept them (src/http/routes/signer-page.ts). Files that do not shrink are left alone.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

const dir = join(import.meta.dirname, '..', 'dist', 'web', 'assets');
const TEXT = new Set(['.js', '.mjs', '.css', '.svg', '.bcmap', '.wasm']);
const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

const names = (await readdir(dir)).filter((name) => TEXT.has(extname(name)));
await Promise.all(
  names.map(async (name) => {
    const bytes = await readFile(join(dir, name));
    const [br, gz] = await Promise.all([
      brotli(bytes, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
          [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
        },
      }),
      gzipped(bytes, { level: 9 }),
    ]);
    if (br.length < bytes.length) await writeFile(join(dir, `${name}.br`), br);
    if (gz.length < bytes.length) await writeFile(join(dir, `${name}.gz`), gz);
  }),
);

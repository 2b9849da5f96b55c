import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { READ_WHOLE_MAX_BYTES } from '../../src/core/files/stored-pdf.js';
import { writeBigPdf } from '../fixtures/big-pdf.js';
import { download, readDocument } from '../helpers/documents.js';
import { upload } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { assertOraclesAccept, hasTool, useWorkspace } from '../pdf/oracles.js';
import { createDocument } from './through-the-api.js';

const missing = ['pdfsig', 'mutool', 'qpdf'].filter((name) => !hasTool(name));
const skip = missing.length > 0 && `needs ${missing.join(', ')} (Debian packages .ci/run installs)`;

describe(
  'issue 26: a main file too large to read whole is checked and sealed where it is stored',
  { skip },
  () => {
    const server = useServer();
    const space = useWorkspace();
    let token: string;
    before(async () => (token = await server.adminToken()));

    it(`over ${READ_WHOLE_MAX_BYTES / 1024 / 1024} MiB: POST /documents reads it as signing does, and PUT /documents/seal signs it from the store and stores the original byte for byte, then the seal's revision, with the size and SHA-512 of those bytes; pdfsig, MuPDF and qpdf accept it`, async () => {
      const path = join(space.dir, 'large.pdf');
      writeBigPdf(path, READ_WHOLE_MAX_BYTES + 2 * 1024 * 1024, 3);
      const original = await readFile(path);
      assert.ok(original.length > READ_WHOLE_MAX_BYTES);
      const fileId = await upload(server, token, original, { name: 'large.pdf' });
      const created = await createDocument(server, token, fileId, 'Large scan');
      assert.equal(created.status, 200, created.text);
      const documentId = created.body.results[0].documentId as string;

      const sealed = await server.api('PUT', '/documents/seal/1', {
        token,
        body: { id: documentId, certificate: true },
      });
      assert.equal(sealed.status, 200, sealed.text);
      assert.equal(sealed.body.levelAchieved, 'B-B');
      const doc = await readDocument(server, token, documentId);
      const bytes = await download(server, token, doc.pdfFile.content as string);
      assert.ok(bytes.length > original.length);
      assert.ok(bytes.subarray(0, original.length).equals(original), 'the original, untouched, first');
      const record = await server.app.deps.db
        .selectFrom('files')
        .select(['size', 'checksum', 'sha256'])
        .where('id', '=', doc.pdfFile.content as string)
        .executeTakeFirstOrThrow();
      assert.deepEqual(record, {
        size: bytes.length,
        checksum: createHash('sha512').update(bytes).digest('hex'),
        sha256: createHash('sha256').update(bytes).digest('hex'),
      });
      await assertOraclesAccept(await space.write('large-sealed.pdf', bytes), 1);
    });
  },
);

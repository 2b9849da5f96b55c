import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createTransport } from 'nodemailer';
import { readEmbeddedFiles } from '../../src/pdf/embedded-files.js';
import { verifyPdf } from '../../src/pdf/verify-pdf.js';
import { verifyFile } from '../../src/ops/verify-file.js';
import { pem } from '../../src/pki/dev-ca.js';
import { aSharedDocument } from '../helpers/sharing.js';
import { mainFileOf, readDocument, signDocument } from '../helpers/documents.js';
import { anOwnerAndTwoSigners } from '../helpers/people.js';
import { USER_PASSWORD } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { assertOraclesAccept, tool, useWorkspace } from '../pdf/oracles.js';

const at = (x: number) => ({ percentX: x, percentY: 0.8, percentWidth: 0.25, percentHeight: 0.08 });

/**
 * `signery verify` run as a stranger would: its own process, no Signery data, no database it could
 * reach (DATA_DIR does not exist, DATABASE_URL points nowhere); its JSON report and exit status.
 */
function signeryVerify(args: string[]) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'verify', ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      DATA_DIR: '/nonexistent/signery-data',
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
    },
    encoding: 'utf8',
    timeout: 120_000,
  });

  const report = run.stdout ? JSON.parse(run.stdout) : undefined;
  return { status: run.status, report, stderr: run.stderr };
}

/** The attachment `name` of a raw MIME message, decoded from its base64 body. */
function attachmentOf(raw: string, name: string): Buffer {
  const part = raw
    .split(/\r?\n--/)
    .find((p) => p.includes(`filename=${name}`) || p.includes(`filename="${name}"`));
  assert.ok(part, `the mail carries ${name}`);
  const body = part
    .split(/\r?\n\r?\n/)
    .slice(1)
    .join('');
  return Buffer.from(body.replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
}

describe('documents that prove themselves: the audit trail inside the final PDF, checked offline', () => {
  const server = useServer({ smtp: true });
  const space = useWorkspace();

  /** A document shared with IVY and JON, both signed: completed, sealed with its trail. */
  let ownerToken: Promise<string> | undefined;
  async function aCompletedDocument(): Promise<{ id: string; owner: string; pdf: Buffer }> {
    const owner = await (ownerToken ??= anOwnerAndTwoSigners(server));
    const { id } = await aSharedDocument(server, owner, {
      title: 'Lease',
      to: ['ivy', 'jon'].map((shareTo) => ({ sharePurpose: 'sign', shareTo })),
    });
    for (const [i, name] of ['ivy', 'jon'].entries()) {
      const token = await server.login(name, USER_PASSWORD);
      const signed = await signDocument(server, token, id, [
        { type: 'signature', position: at(0.1 + 0.4 * i) },
      ]);
      assert.equal(signed.status, 200, signed.text);
    }
    assert.equal((await readDocument(server, owner, id)).workflow.shareStateName, 'completed');
    return { id, owner, pdf: await mainFileOf(server, owner, id) };
  }

  it('the completed document carries its trail (JSON and pages), covered by the final seal; signery verify proves it offline, also after a trip through e-mail', async () => {
    const { id, pdf } = await aCompletedDocument();
    const files = await readEmbeddedFiles({ pdf });
    assert.deepEqual(
      files.map((f) => [f.name, f.mimeType]),
      [
        ['signery-audit-trail.json', 'application/json'],
        ['signery-audit-trail.pdf', 'application/pdf'],
      ],
    );
    const trail = JSON.parse(Buffer.from(files[0]!.bytes).toString('utf8'));
    assert.equal(trail.format, 'signery-audit-trail/1');
    assert.equal(trail.document.id, id);
    const activities = trail.events.map((e: { activityType: string }) => e.activityType);
    assert.ok(activities.includes('documentCreated'), activities.join());
    assert.equal(activities.filter((a: string) => a === 'documentSigned').length, 2, activities.join());
    assert.match(trail.anchor.hash, /^[0-9a-f]{64}$/);
    assert.ok(trail.revisions.length >= 3, 'created, and one revision per signature');
    const pagesPath = await space.write('trail-pages.pdf', files[1]!.bytes);
    assert.match(await tool('pdftotext', [pagesPath, '-']), /Audit trail[\s\S]*documentSigned/);

    // The seal is the last signature and covers every byte: the trail is inside what it signed.
    const { signatures } = await verifyPdf({ pdf });
    assert.equal(signatures.length, 3);
    assert.equal(signatures.at(-1)!.coversWholeFile, true);

    const root = (await server.app.deps.seal()).trustAnchors[0]!;
    const rootPath = await space.write('root.pem', pem('CERTIFICATE', root));
    const direct = await space.write('lease.pdf', pdf);
    const checked = signeryVerify([direct, '--trust', rootPath]);
    assert.equal(checked.status, 0, checked.stderr || JSON.stringify(checked.report?.problems));
    assert.equal(checked.report.verdict, 'valid');
    assert.equal(checked.report.signatures.length, 3);
    for (const s of checked.report.signatures) {
      assert.deepEqual([s.intact, s.trusted], [true, true], s.fieldName);
      assert.ok(s.level, `${s.fieldName} has a proven level`);
    }
    assert.deepEqual([checked.report.auditTrail.present, checked.report.auditTrail.intact], [true, true]);
    assert.equal(checked.report.auditTrail.coveredBy, signatures.at(-1)!.fieldName);
    const revisions = checked.report.auditTrail.revisions as { inFile: boolean }[];
    assert.ok(
      revisions.every((r) => r.inFile),
      'every revision of the trail is one of the file',
    );
    assert.ok((checked.report.auditTrail.events as { intact: boolean }[]).every((e) => e.intact));

    // Mailed as an attachment through a real SMTP server, read back from the message: the same verdict.
    const mailer = createTransport({ url: server.smtp.url } as never);
    await mailer.sendMail({
      from: 'owner@example.test',
      to: 'counterparty@example.test',
      subject: 'The signed lease',
      text: 'Attached.',
      attachments: [{ filename: 'lease.pdf', content: pdf, contentType: 'application/pdf' }],
    });
    const mail = await server.smtp.waitFor('counterparty@example.test', /The signed lease/);
    const received = attachmentOf(mail.raw, 'lease.pdf');
    assert.equal(Buffer.compare(received, pdf), 0, 'the bytes came through unchanged');
    const mailed = signeryVerify([await space.write('mailed.pdf', received), '--trust', rootPath]);
    assert.equal(mailed.status, 0, JSON.stringify(mailed.report?.problems));
    assert.equal(mailed.report.verdict, 'valid');

    // The API's verification shows the same trail.
    const report = await server.api('GET', `/documents/${id}/verify`, { token: await server.adminToken() });
    assert.equal(report.status, 200, report.text);
    assert.deepEqual([report.body.auditTrail.present, report.body.auditTrail.intact], [true, true]);
    assert.equal(report.body.auditTrail.document.id, id);
  });

  it('the trail travels in the seal’s own revision: nothing lies between the last user signature and the seal, the trail is on the seal’s appearance inside its signed bytes, and the catalog gains no attachments (issue 38: strict validators such as pyHanko hold a revision of attachments after a signature against it)', async () => {
    const { pdf } = await aCompletedDocument();
    const { signatures } = await verifyPdf({ pdf });
    assert.equal(signatures.length, 3);
    const [, lastUser, seal] = signatures as [unknown, (typeof signatures)[0], (typeof signatures)[0]];
    const end = (s: (typeof signatures)[0]): number => s.byteRange[2]! + s.byteRange[3]!;
    const userEnd = end(lastUser);
    const sealEnd = end(seal);
    // Every revision ends with %%EOF: between the user's signed bytes and the seal's end there is one,
    // the seal's own (the trail's revision before the seal, as documents sealed before had, is a second).
    const markers: number[] = [];
    for (let at = pdf.indexOf('%%EOF', userEnd); at !== -1 && at < sealEnd; at = pdf.indexOf('%%EOF', at + 5))
      markers.push(at);
    assert.equal(
      markers.length,
      1,
      `revisions between the last user signature and the seal end at ${markers.join()}`,
    );

    // The trail's files are associated files of the seal widget's appearance, and nowhere else.
    const files = await readEmbeddedFiles({ pdf });
    assert.deepEqual(
      files.map((f) => [f.name, f.field]),
      [
        ['signery-audit-trail.json', seal.fieldName],
        ['signery-audit-trail.pdf', seal.fieldName],
      ],
    );
    // Their streams lie in the seal's revision, inside the bytes its signature covers (not its /Contents).
    const [, gapStart, gapEnd] = seal.byteRange as [number, number, number, number];
    const streams: number[] = [];
    for (
      let at = pdf.indexOf('/Type /EmbeddedFile');
      at !== -1;
      at = pdf.indexOf('/Type /EmbeddedFile', at + 1)
    )
      streams.push(at);
    assert.equal(streams.length, 2);
    for (const at of streams) {
      assert.ok(at > userEnd && at < sealEnd, `the trail stream at ${at} is in the seal's revision`);
      assert.ok(at < gapStart || at >= gapEnd, `the trail stream at ${at} is signed by the seal`);
    }
    // The catalog names no attachments: the users' signatures see a new signature field and nothing else.
    const tail = pdf.subarray(userEnd).toString('latin1');
    assert.doesNotMatch(
      tail,
      /\/EmbeddedFiles|\/Names\s*<</,
      'no EmbeddedFiles name tree after the users signed',
    );

    // The independent tools still accept the file, every signature valid.
    await assertOraclesAccept(await space.write('sealed-with-trail.pdf', pdf), 3);
  });

  it('one byte changed anywhere fails the verdict: in the header, in a signed revision, inside the trail, in the unused room of the seal’s /Contents, at the very end', async () => {
    const { pdf } = await aCompletedDocument();
    const { signatures } = await verifyPdf({ pdf });
    const seal = signatures.at(-1)!;
    const [, gapStart, gapEnd] = seal.byteRange as [number, number, number, number];
    const trailStream = pdf.indexOf('/Type /EmbeddedFile');
    assert.ok(trailStream > 0);
    const places: [string, number][] = [
      ['the header', 1],
      ['the first revision', Math.floor(pdf.length / 10)],
      ['the middle', Math.floor(pdf.length / 2)],
      ['the embedded trail', trailStream + 40],
      ['the unused room of the seal’s /Contents', gapEnd - 3],
      ['the seal’s signature value', gapStart + 20],
      ['the last byte', pdf.length - 1],
    ];
    for (const [n, [where, offset]] of places.entries()) {
      const changed = Buffer.from(pdf);
      changed[offset] = changed[offset] === 0x30 ? 0x31 : changed[offset]! ^ 0x01;
      // The command for the first (a process each is slow); the same check in this process for the rest.
      if (n < 1) {
        const checked = signeryVerify([await space.write(`changed-${offset}.pdf`, changed)]);
        assert.equal(checked.status, 1, `${where} (offset ${offset}): ${JSON.stringify(checked.report)}`);
        assert.notEqual(checked.report?.verdict, 'valid', where);
      } else {
        const report = await verifyFile(changed, { trustAnchors: [] });
        assert.notEqual(report.verdict, 'valid', `${where} (offset ${offset}): ${JSON.stringify(report)}`);
      }
    }
    // Appended bytes are a change after the last signature.
    const grown = await verifyFile(Buffer.concat([pdf, Buffer.from('\n% more\n')]), { trustAnchors: [] });
    assert.equal(grown.verdict, 'changed');
    // And not a PDF at all: a report, not a crash.
    const junk = signeryVerify([await space.write('junk.pdf', Buffer.from('not a pdf'))]);
    assert.equal(junk.status, 1);
    assert.equal(junk.report.verdict, 'invalid');
    assert.equal(signeryVerify([join(space.dir, 'missing.pdf')]).status, 2);
  });
});

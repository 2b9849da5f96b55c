import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { verifyPdf } from '../../src/pdf/verify-pdf.js';
import { renewDueArchives } from '../../src/signing/renew-archives.js';
import { useOpensslPki } from '../fixtures/openssl-pki.js';
import { startTestTsa, type TestTsa } from '../fixtures/tsa-server.js';
import { aDocument, mainFileOf, readDocument } from '../helpers/documents.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { auditOf } from '../helpers/audit-log.js';
import { useStarted } from '../helpers/use-server.js';
import {
  extractSignatures,
  hasTool,
  nssDatabase,
  opensslTsVerify,
  pdfsig,
  tool,
  useWorkspace,
} from '../pdf/oracles.js';

const HOUR_MS = 3_600_000;

/** Polls `check` every 200 ms until it answers something, for at most `withinMs`. */
async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  withinMs = 60_000,
): Promise<T> {
  const until = Date.now() + withinMs;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`${what}: not within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('archive renewal: B-LTA documents get a new document timestamp before theirs stops proving them', () => {
  const pki = useOpensslPki();
  const space = useWorkspace();
  /** A TSA (run by the test) whose certificate ends in 30 days. */
  const shortTsa = useStarted<TestTsa>(
    'the short-lived TSA',
    () =>
      startTestTsa({
        certificate: pki.shortTsa.certificate,
        privateKey: createPrivateKey(pki.shortTsa.key),
        chain: [pki.certificates.intermediate, pki.certificates.root],
      }),
    (tsa) => tsa.close(),
  );

  const outsideSeal = () => ({
    SEAL_P12: pki.sealP12,
    SEAL_P12_PASSWORD: pki.p12Password,
    REVOCATION_ALLOW_PRIVATE: 'true',
  });

  /** Until when the store says the document's archive timestamp proves it. */
  const expiresAt = async (server: TestServer, id: string) => {
    const row = await server.app.deps.db
      .selectFrom('documents')
      .select('archive_expires_at')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return row.archive_expires_at ? new Date(row.archive_expires_at) : null;
  };

  const revision = (server: TestServer, token: string, id: string, n: number) =>
    server.api('GET', `/revisions/document/${id}/${n}`, { token });

  it('due within LTA_RENEW_DAYS: fresh validation data and a new document timestamp as a revision, audited; every validator accepts the file; a TSA that would not extend the proof changes nothing', async () => {
    // Sealed at B-LTA with the short-lived TSA, on a node without a worker (it renews nothing).
    const sealing = await startServer({ env: { ...outsideSeal(), TSA_URL: shortTsa.url }, worker: false });
    const nodes: TestServer[] = [];
    try {
      const admin = await sealing.adminToken();
      const id = await aDocument(sealing, admin, { title: 'Archive' });
      const sealed = await sealing.api('PUT', '/documents/seal/1', {
        token: admin,
        body: { id, certificate: true, level: 'B-LTA' },
      });
      assert.equal(sealed.status, 200, sealed.text);
      assert.deepEqual([sealed.body.levelAchieved, sealed.body.fellBack], ['B-LTA', false], sealed.text);
      const shortEnd = new Date(new X509Certificate(pki.shortTsa.certificate).validTo);
      assert.deepEqual(
        await expiresAt(sealing, id),
        shortEnd,
        'the archive proves until the TSA certificate ends',
      );
      const before = (await revision(sealing, admin, id, 1)).body.revisions as number;
      const version = (await readDocument(sealing, admin, id))._version as number;

      // A node whose TSA's certificate lasts a year, one hour later: the hourly renewal's next tick.
      // Its margin (90 days) covers the 30 days left.
      const renewing = await startServer({
        sameStoreAs: sealing,
        clock: new ManualClock(new Date(Date.now() + HOUR_MS)),
        env: { ...outsideSeal(), TSA_URL: pki.tsaUrl, LTA_RENEW_DAYS: '90' },
      });
      nodes.push(renewing);
      const renewed = await eventually('the renewal', async () => {
        const doc = await readDocument(renewing, admin, id);
        return doc._version > version ? doc : undefined;
      });
      assert.equal(renewed._version, version + 1, 'one change');
      const added = await revision(renewing, admin, id, before + 1);
      assert.equal(added.status, 200, added.text);
      assert.equal(added.body.reason, 'archiveRenewed');
      assert.equal(added.body.revisions, before + 1);
      assert.equal(added.body.pdfFile.id, renewed.pdfFile.content, 'the renewed file is the main file');
      const longEnd = new Date(new X509Certificate(pki.certificates.tsa).validTo);
      assert.deepEqual(
        await expiresAt(renewing, id),
        longEnd,
        'it now proves until the new TSA certificate ends',
      );
      const audit = await auditOf(renewing, id, 'documentArchiveRenewed');
      assert.equal(audit.length, 1, 'audited once');
      assert.equal(audit[0]!.data.provesUntil, longEnd.toISOString());

      // The file: the seal and both document timestamps valid, the seal still at B-LTA; the first
      // timestamp's chain (the short-lived TSA) now has revocation data in the DSS.
      const pdf = await mainFileOf(renewing, admin, id);
      const { signatures, securityStore } = await verifyPdf({ pdf, trustAnchors: [pki.certificates.root] });
      assert.deepEqual(
        signatures.map((s) => s.kind),
        ['signature', 'document-timestamp', 'document-timestamp'],
      );
      for (const s of signatures) {
        assert.equal(s.indication, 'TOTAL_PASSED', `${s.fieldName}: ${JSON.stringify(s.problems)}`);
      }
      assert.equal(signatures[0]!.level, 'B-LTA');
      assert.ok(
        securityStore!.certificates.some((c) => Buffer.compare(c, pki.shortTsa.certificate) === 0),
        'the first archive timestamp’s TSA certificate is in the DSS',
      );
      assert.equal(signatures[1]!.certificate.revocation, 'good', 'and its revocation data');
      const path = await space.write('renewed.pdf', pdf);
      if (hasTool('pdfsig')) {
        const verdicts = await pdfsig(path, await nssDatabase(space, pki.certificates.root));
        // pdfsig lists document timestamps but checks only signatures (openssl ts checks those below).
        assert.equal(verdicts.length, 3);
        assert.equal(verdicts[0]!.validation, 'Signature is Valid.', verdicts[0]!.raw);
      }
      if (hasTool('mutool')) {
        const out = await tool('mutool', ['sign', '-v', path]);
        assert.doesNotMatch(out, /Digest (failure|mismatch)|Signature is invalid/i, out);
      }
      if (hasTool('openssl')) {
        const stamps = (await extractSignatures(space, pdf, 'renewed')).filter(
          (e) => e.type === 'DocTimeStamp',
        );
        assert.equal(stamps.length, 2);
        for (const stamp of stamps)
          assert.match(await opensslTsVerify(stamp, pki.caFile), /Verification: OK/);
      }

      // Another hour on, a node whose TSA is the short-lived one again and whose margin covers the
      // year: renewing would not prove the file any longer, so nothing is written and the run fails
      // (the operator sees it in the job's error and the metrics).
      const noLonger = await startServer({
        sameStoreAs: sealing,
        clock: new ManualClock(new Date(Date.now() + 2 * HOUR_MS)),
        env: { ...outsideSeal(), TSA_URL: shortTsa.url, LTA_RENEW_DAYS: '400' },
      });
      nodes.push(noLonger);
      await renewing.close();
      nodes.splice(nodes.indexOf(renewing), 1);
      const failure = await eventually('the failed run', async () => {
        const job = await noLonger.app.deps.db
          .selectFrom('jobs')
          .select(['last_error', 'run_at'])
          .where('type', '=', 'schedule:documents.renewArchives')
          .where('last_error', 'is not', null)
          .executeTakeFirst();
        return job?.last_error ?? undefined;
      });
      assert.match(failure, /would not extend its proof/);
      const after = await readDocument(noLonger, admin, id);
      assert.equal(after._version, renewed._version, 'nothing written');
      assert.deepEqual(await expiresAt(noLonger, id), longEnd);
    } finally {
      for (const node of nodes) await node.close();
      await sealing.close();
    }
  });

  it('documents never sealed at B-LTA and deleted ones are left alone', async () => {
    const server = await startServer({
      env: { ...outsideSeal(), TSA_URL: shortTsa.url, LTA_RENEW_DAYS: '400' },
      worker: false,
    });
    try {
      const admin = await server.adminToken();
      const lt = await aDocument(server, admin, { title: 'B-LT only' });
      const sealed = await server.api('PUT', '/documents/seal/1', {
        token: admin,
        body: { id: lt, certificate: true, level: 'B-LT' },
      });
      assert.equal(sealed.body.levelAchieved, 'B-LT', sealed.text);
      assert.equal(await expiresAt(server, lt), null, 'no archive timestamp, nothing to renew');
      const lta = await aDocument(server, admin, { title: 'Deleted' });
      await server.api('PUT', '/documents/seal/1', {
        token: admin,
        body: { id: lta, certificate: true, level: 'B-LTA' },
      });
      assert.ok(await expiresAt(server, lta));
      const deleted = await server.api('DELETE', '/documents', {
        token: admin,
        body: { documents: [{ id: lta }] },
      });
      assert.equal(deleted.status, 200, deleted.text);
      assert.deepEqual(await renewDueArchives(server.app.deps), { renewed: [], failed: [] });
    } finally {
      await server.close();
    }
  });
});

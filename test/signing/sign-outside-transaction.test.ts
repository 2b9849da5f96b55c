import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { useTestTsa } from '../fixtures/tsa-server.js';
import { eventsOf, readDocument, signDocument, writeMainFile } from '../helpers/documents.js';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { aUser, someUsers, withMail } from '../helpers/people.js';
import { upload, USER_PASSWORD, type ApiResponse } from '../helpers/server.js';
import { shareDocument } from '../helpers/sharing.js';
import { auditOf } from '../helpers/audit-log.js';
import { useServer } from '../helpers/use-server.js';
import { hasTool, pdfsig, useWorkspace } from '../pdf/oracles.js';

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.08 });

/** Whether a promise has settled yet (without waiting for it). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  const pending = Symbol('pending');
  return (await Promise.race([promise.then(() => true), Promise.resolve(pending)])) !== pending;
}

describe('DESIGN: remote calls never run inside a database transaction (sign first, then one short commit)', () => {
  const tsa = useTestTsa();
  const server = useServer(() => ({ env: { TSA_URL: tsa.url } }));
  const space = useWorkspace();
  let owner: string;
  let other: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
    other = (await aUser(server, withMail('other'))).token;
    await someUsers(server, [{ name: 'last', email: 'last@example.test', displayName: 'Last Signer' }]);
  });

  const newDocument = async (token: string, title: string) => {
    const content = await upload(server, token, makePdf());
    const created = await server.api('POST', '/documents', {
      token,
      body: { body: { documentTitle: title, pdfFile: { content } } },
    });
    assert.equal(created.status, 200, created.text);
    return created.body.results[0] as { documentId: string; _version: number };
  };
  const read = (id: string) => readDocument(server, owner, id);

  /**
   * Runs `call` while the TSA holds its answer: meanwhile another user's document create completes (on
   * SQLite a transaction held open across the TSA call would keep that writer waiting) and `call` has
   * not answered; then the TSA answers and `call`'s answer is returned.
   */
  async function whileTheTsaHolds(call: () => Promise<ApiResponse>): Promise<ApiResponse> {
    tsa.hold();
    const pending = call();
    try {
      await tsa.held(1);
      const created = await newDocument(other, 'Written meanwhile');
      assert.equal(created._version, 1);
      assert.equal(await settled(pending), false, 'the call still waits for the TSA');
    } finally {
      tsa.release();
    }
    const answer = await pending;
    assert.equal(answer.status, 200, answer.text);
    return answer;
  }
  const signature = [{ type: 'signature', position: at(0.1, 0.8) }];
  const signedAtBt = (signing: { levelAchieved: string; fellBack: boolean }) =>
    assert.deepEqual([signing.levelAchieved, signing.fellBack], ['B-T', false]);

  it('while the TSA holds its answer, another user’s document create completes; released, the signature lands with the right _version', async () => {
    const doc = await newDocument(owner, 'Held by the TSA');
    tsa.hold();
    const signing = server.api('PUT', '/documents/sign/1', {
      token: owner,
      body: { id: doc.documentId, signatures: [{ type: 'signature', position: at(0.1, 0.8) }] },
    });
    try {
      await tsa.held(1);
      // On SQLite a transaction held open across the TSA call would keep this writer waiting.
      const created = await newDocument(other, 'Written meanwhile');
      assert.equal(created._version, 1);
      assert.equal(await settled(signing), false, 'the signature still waits for the TSA');
      assert.equal((await read(doc.documentId))._version, 1, 'nothing of the signature is visible yet');
    } finally {
      tsa.release();
    }
    const signed = await signing;
    assert.equal(signed.status, 200, signed.text);
    assert.deepEqual([signed.body.levelAchieved, signed.body.fellBack], ['B-T', false]);
    const after = await read(doc.documentId);
    assert.equal(after._version, 2);
    assert.equal(after.isSigned, true);
  });

  it('POST /documents with optionalData.signatures: signed before its transaction, created and signed as one change', async () => {
    const content = await upload(server, owner, makePdf());
    const created = await whileTheTsaHolds(() =>
      server.api('POST', '/documents', {
        token: owner,
        body: {
          body: { documentTitle: 'Signed at creation', pdfFile: { content } },
          optionalData: { signatures: signature },
        },
      }),
    );
    signedAtBt(created.body.signing);
    const doc = await read(created.body.results[0].documentId);
    assert.deepEqual([doc._version, doc.isSigned], [1, true]);
    assert.equal((await auditOf(server, doc.documentId, 'documentSigned')).length, 1);
  });

  it('PUT /documents/:version with a new title and signatures: signed before its transaction, one change', async () => {
    const doc = await newDocument(owner, 'Edited and signed');
    const changed = await whileTheTsaHolds(() =>
      server.api('PUT', '/documents/1', {
        token: owner,
        body: { id: doc.documentId, body: { documentTitle: 'Edited, then signed' }, signatures: signature },
      }),
    );
    signedAtBt(changed.body.signing);
    const after = await read(doc.documentId);
    assert.deepEqual([after._version, after.isSigned, after.documentTitle], [2, true, 'Edited, then signed']);
  });

  it('PUT /documents/:version lost to a change made while its TSA held: 409, and neither its edit nor its signature is kept', async () => {
    const doc = await newDocument(owner, 'Changed meanwhile');
    tsa.hold();
    const pending = server.api('PUT', '/documents/1', {
      token: owner,
      body: { id: doc.documentId, body: { documentTitle: 'Lost' }, signatures: signature },
    });
    try {
      await tsa.held(1);
      const meanwhile = await server.api('PUT', '/documents/1', {
        token: owner,
        body: { id: doc.documentId, body: { documentTitle: 'Won' } },
      });
      assert.equal(meanwhile.status, 200, meanwhile.text);
    } finally {
      tsa.release();
    }
    const lost = await pending;
    assert.equal(lost.status, 409, lost.text);
    const after = await read(doc.documentId);
    assert.deepEqual([after._version, after.isSigned, after.documentTitle], [2, false, 'Won']);
    assert.equal((await auditOf(server, doc.documentId, 'documentSigned')).length, 0);
  });

  it('POST /share with the sharer’s signatures: signed before its transaction; the shares go out with the signed file', async () => {
    const doc = await newDocument(owner, 'Signed, then shared');
    const shared = await whileTheTsaHolds(() =>
      server.api('POST', '/share', {
        token: owner,
        body: {
          id: doc.documentId,
          data: [{ sharePurpose: 'sign', shareTo: 'last' }],
          signatures: signature,
        },
      }),
    );
    assert.equal(shared.body.length, 1);
    const after = await read(doc.documentId);
    assert.deepEqual([after._version, after.isSigned], [2, true]);
    assert.equal((await auditOf(server, doc.documentId, 'documentSigned')).length, 1);
  });

  it('POST /inbox/action `sign` on a sign share: signed before its transaction, the share completed in it', async () => {
    const doc = await newDocument(owner, 'Signed from the inbox');
    const [share] = await shareDocument(server, owner, doc.documentId, { to: 'last' });
    const last = await server.login('last', USER_PASSWORD);
    const acted = await whileTheTsaHolds(() =>
      server.api('POST', '/inbox/action', {
        token: last,
        body: { shareId: share.shareId, action: 'sign', signatures: signature },
      }),
    );
    signedAtBt(acted.body);
    assert.equal(acted.body.shareStateName, 'completed');
  });

  it('two signs of one version racing past the TSA: exactly one wins, the other gets 409 with nothing half-written', async () => {
    const doc = await newDocument(owner, 'Race past the TSA');
    const images = [
      await upload(server, owner, PNG_1PX, { name: 'a.png', type: 'image/png' }),
      await upload(server, owner, PNG_1PX, { name: 'b.png', type: 'image/png' }),
    ];
    tsa.hold();
    const attempts = images.map((blob, i) =>
      server.api('PUT', '/documents/sign/1', {
        token: owner,
        body: {
          id: doc.documentId,
          signatures: [{ type: 'signature', position: at(0.1 + 0.4 * i, 0.2) }],
          images: [{ blob, position: at(0.1 + 0.4 * i, 0.5) }],
        },
      }),
    );
    try {
      // Both are signed (each waits for its timestamp) before either commits.
      await tsa.held(2);
    } finally {
      tsa.release();
    }
    const answers = await Promise.all(attempts);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409], answers.map((a) => a.text).join());
    const loser = answers.findIndex((a) => a.status === 409);
    assert.equal(answers[loser]!.body.code, 'VERSION_MISMATCH');
    // Held inside a transaction, the second request would reach the TSA only after the first had
    // given up on it (its time-out), and the winner would have fallen back to B-B.
    const winner = answers[1 - loser]!.body;
    assert.deepEqual([winner.levelAchieved, winner.fellBack], ['B-T', false]);

    const { db } = server.app.deps;
    const files = await db
      .selectFrom('files')
      .select(['id', 'used_by', 'kind'])
      .where('id', 'in', images)
      .execute();
    const usedBy = Object.fromEntries(files.map((f) => [f.id, f.used_by]));
    assert.equal(usedBy[images[loser]!], null, 'the loser’s image is not claimed');
    assert.equal(usedBy[images[1 - loser]!], `document:${doc.documentId}`);
    const signedFiles = await db
      .selectFrom('files')
      .select('id')
      .where('used_by', '=', `document:${doc.documentId}`)
      .where('kind', '=', 'signed')
      .execute();
    assert.equal(signedFiles.length, 1, 'one signed file, the winner’s');
    assert.equal((await auditOf(server, doc.documentId, 'documentSigned')).length, 1);
    const events = await eventsOf(server, doc.documentId);
    assert.equal(events.filter((event) => event === 'documentSigned').length, 1);
    const after = await read(doc.documentId);
    assert.equal(after._version, 2);
    assert.equal(after.pdfFile.content, signedFiles[0]!.id);
  });

  it('the last signature completes the document; the seal is its own step after that commit, done before the call answers', async () => {
    const doc = await newDocument(owner, 'Sealed on completion');
    await shareDocument(server, owner, doc.documentId, { to: 'last' });
    const last = await server.login('last', USER_PASSWORD);
    const signature = [{ type: 'signature', position: at(0.1, 0.8) }];
    const signed = await signDocument(server, last, doc.documentId, signature, owner);
    assert.equal(signed.status, 200, signed.text);
    assert.equal(signed.body.shareStateName, 'completed');
    const { db } = server.app.deps;
    const revisions = (await auditOf(server, doc.documentId))
      .map((record) => record.activityType)
      .filter((type) => type === 'documentSigned' || type === 'documentSealed');
    assert.deepEqual(
      revisions,
      ['documentSigned', 'documentSealed'],
      'the seal is a change of its own, after the signature',
    );
    const jobs = await db
      .selectFrom('jobs')
      .select(['status', 'attempts', 'locked_by'])
      .where('type', '=', 'document.sealOnComplete')
      .where('id', 'like', `%:${doc.documentId}:%`)
      .execute();
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0]!.status, 'done', 'the seal ran as its durable job, claimed by the request');
    assert.match(jobs[0]!.locked_by ?? '', /^request\//);
    const report = await server.api('GET', `/documents/${doc.documentId}/verify`, { token: owner });
    assert.equal(report.status, 200, report.text);
    assert.equal(report.body.signatures.length, 2, 'signature and seal are in the file');
    if (hasTool('pdfsig')) {
      const verdicts = await pdfsig(await writeMainFile(server, owner, doc.documentId, space));
      assert.deepEqual(
        verdicts.map((v) => v.validation),
        ['Signature is Valid.', 'Signature is Valid.'],
      );
    }
  });

  it('a change to a document already completed queues no second seal: the seal belongs to the change that completed it', async () => {
    const doc = await newDocument(owner, 'Completed, then annotated and signed again');
    await shareDocument(server, owner, doc.documentId, { to: 'last' });
    const last = await server.login('last', USER_PASSWORD);
    const completed = await signDocument(server, last, doc.documentId, signature, owner);
    assert.equal(completed.body.shareStateName, 'completed', completed.text);
    const sealedAt = (await read(doc.documentId))._version;
    const annotated = await server.api('PUT', `/documents/annotate/${sealedAt}`, {
      token: owner,
      body: { id: doc.documentId, annotations: [{ text: 'Filed', position: at(0.1, 0.1) }] },
    });
    assert.equal(annotated.status, 200, annotated.text);
    const signedAgain = await server.api('PUT', `/documents/sign/${sealedAt + 1}`, {
      token: owner,
      body: { id: doc.documentId, signatures: [{ type: 'signature', position: at(0.5, 0.5) }] },
    });
    assert.equal(signedAgain.status, 200, signedAgain.text);
    const seals = await server.app.deps.db
      .selectFrom('jobs')
      .select('id')
      .where('type', '=', 'document.sealOnComplete')
      .where('id', 'like', `%:${doc.documentId}:%`)
      .execute();
    assert.equal(seals.length, 1, 'one seal, queued by the completing signature');
    assert.equal((await auditOf(server, doc.documentId, 'documentSealed')).length, 1);
  });
});

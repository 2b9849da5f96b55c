import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { assertSignaturesValid, useWorkspace } from '../pdf/oracles.js';
import { aDocument, readDocument, signDocument, writeMainFile } from '../helpers/documents.js';
import { aUser, someUsers, withMail } from '../helpers/people.js';
import { linkOf, signByLink } from '../helpers/sharing.js';
import { USER_PASSWORD } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.15, percentHeight: 0.05 });
const signatureAt = (x: number) => [{ type: 'signature', position: at(x, 0.85) }];

describe('spec Sign entity: signEntities in POST /share, the document completes when every entity has its quorum', () => {
  const server = useServer({ smtp: true });
  const smtp = server.smtp;
  const space = useWorkspace();
  let owner: string;
  before(async () => {
    owner = (await aUser(server, withMail('owner'))).token;
    await someUsers(server, ['ivy', 'jon', 'kim'].map(withMail));
  });

  const newDoc = (title: string) => aDocument(server, owner, { title });
  const read = (id: string) => readDocument(server, owner, id);
  const share = (id: string, body: Record<string, unknown>) =>
    server.api('POST', '/share', { token: owner, body: { id, ...body } });
  const statuses = async (id: string) =>
    Object.fromEntries(
      (
        await server.app.deps.db
          .selectFrom('shares')
          .select(['share_to', 'status'])
          .where('document_id', '=', id)
          .execute()
      ).map((s) => [s.share_to, s.status]),
    );
  const signAsUser = async (name: string, id: string, x: number) =>
    signDocument(server, await server.login(name, USER_PASSWORD), id, signatureAt(x), owner);
  const signByLinkAt = (token: string, id: string, x: number) =>
    signByLink(server, token, id, signatureAt(x));
  const assertAllValid = async (id: string, count: number) =>
    assertSignaturesValid(await writeMainFile(server, owner, id, space), count);

  it('entities are checked: a role, distinct, with members, a reachable quorum; members are sign recipients of a listed role', async () => {
    const id = await newDoc('Checked');
    const cases: [Record<string, unknown>, RegExp][] = [
      [
        { data: [{ sharePurpose: 'sign', shareTo: 'ivy' }], signEntities: [{ type: 'user', quorum: 1 }] },
        /"signEntities\[0\]" must have userRoleId or userRoleName/,
      ],
      [
        {
          data: [{ sharePurpose: 'sign', shareTo: 'ivy', userRoleId: 7 }],
          signEntities: [{ type: 'user', userRoleId: 1 }],
        },
        /"data\[0\]\.userRoleId" must name one of the signEntities/,
      ],
      [
        {
          data: [
            { sharePurpose: 'sign', shareTo: 'ivy', userRoleId: 1 },
            { sharePurpose: 'sign', shareTo: 'jon', userRoleId: 1 },
          ],
          signEntities: [{ type: 'user', userRoleId: 1, quorum: 3 }],
        },
        /"signEntities\[0\]\.quorum" must be less than or equal to 2/,
      ],
      [
        {
          data: [{ sharePurpose: 'approve', shareTo: 'ivy', userRoleName: 'Board' }],
          signEntities: [{ type: 'user', userRoleName: 'Board' }],
        },
        /"data\[0\]\.sharePurpose" must be \[sign\] for a member of a sign entity/,
      ],
      [
        {
          data: [{ sharePurpose: 'sign', shareTo: 'ivy', userRoleId: 1 }],
          signEntities: [
            { type: 'user', userRoleId: 1 },
            { type: 'user', userRoleId: 2 },
          ],
        },
        /"signEntities\[1\]" has no recipient in data/,
      ],
      [
        {
          data: [{ sharePurpose: 'sign', shareTo: 'ivy', userRoleId: 1 }],
          signEntities: [
            { type: 'user', userRoleId: 1 },
            { type: 'user', userRoleId: 1, userRoleName: 'Again' },
          ],
        },
        /"signEntities\[1\]" names the same role as an earlier sign entity/,
      ],
      [
        {
          data: [{ sharePurpose: 'sign', shareTo: 'ivy', userRoleId: 1 }],
          signEntities: [{ type: 'user', userRoleId: 1, shareType: 'approve' }],
        },
        /"signEntities\[0\]\.shareType" must be \[sign\]/,
      ],
    ];
    for (const [body, message] of cases) {
      const response = await share(id, body);
      assert.equal(response.status, 400, JSON.stringify(body));
      assert.equal(response.body.code, 'VALIDATION_ERROR');
      assert.match(response.body.message, message);
    }
    assert.equal((await read(id)).workflow.shareStateName ?? null, null, 'nothing was shared');
  });

  it('parallel: 2 of 3 signers of role 1 and 1 of 2 witnesses complete the document; the others stop being awaited (notRequired) and cannot sign', async () => {
    const id = await newDoc('Board resolution');
    const shared = await share(id, {
      data: [
        { sharePurpose: 'sign', shareTo: 'ivy', userRoleId: 1, userRoleName: 'Director' },
        { sharePurpose: 'sign', shareTo: 'jon', userRoleId: 1, userRoleName: 'Director' },
        { sharePurpose: 'sign', shareTo: 'director@example.org', userRoleId: 1, userRoleName: 'Director' },
        { sharePurpose: 'sign', shareTo: 'witness@example.org', userRoleName: 'Witness' },
        { sharePurpose: 'sign', shareTo: 'kim', userRoleName: 'Witness' },
      ],
      signEntities: [
        { type: 'user', userRoleId: 1, userRoleName: 'Director', quorum: 2, shareType: 'sign' },
        { type: 'user', userRoleName: 'Witness', quorum: 1 },
      ],
    });
    assert.equal(shared.status, 200, shared.text);
    assert.deepEqual(
      shared.body.map((s: { quorum: number; userRoleName: string }) => [s.userRoleName, s.quorum]),
      [
        ['Director', 2],
        ['Director', 2],
        ['Director', 2],
        ['Witness', 1],
        ['Witness', 1],
      ],
    );
    assert.equal(shared.body[0].userRoleId, 1);
    assert.deepEqual((await read(id)).waitingFor, [
      'ivy',
      'jon',
      'director@example.org',
      'witness@example.org',
      'kim',
    ]);
    const director = await linkOf(smtp, 'director@example.org', /Board resolution/);
    const witness = await linkOf(smtp, 'witness@example.org', /Board resolution/);

    assert.equal((await signAsUser('ivy', id, 0.05)).status, 200);
    assert.deepEqual((await read(id)).waitingFor, [
      'jon',
      'director@example.org',
      'witness@example.org',
      'kim',
    ]);
    const second = await signByLinkAt(director, id, 0.25);
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.shareStateName, 'inprogress', 'the witnesses have not signed yet');
    assert.deepEqual(
      (await read(id)).waitingFor,
      ['witness@example.org', 'kim'],
      'jon is no longer awaited: the directors have their quorum',
    );
    assert.equal((await statuses(id)).jon, 'notRequired');
    const late = await signAsUser('jon', id, 0.45);
    assert.equal(late.status, 403, 'jon is no longer a signer of this document');

    const last = await signAsUser('kim', id, 0.65);
    assert.equal(last.status, 200, last.text);
    assert.equal(last.body.shareStateName, 'completed');
    const done = await read(id);
    assert.equal(done.workflow.shareStateName, 'completed');
    assert.deepEqual(done.waitingFor, []);
    assert.deepEqual(await statuses(id), {
      ivy: 'done',
      jon: 'notRequired',
      'director@example.org': 'done',
      'witness@example.org': 'notRequired',
      kim: 'done',
    });
    // Issue 37 item 9: a share no longer awaited has ended, and its link with it.
    const refused = await server.api('PUT', `/share/document/sign/${done._version}`, {
      token: witness,
      body: { id, signatures: signatureAt(0.85) },
    });
    assert.equal(refused.status, 401, refused.text);
    assert.equal(refused.body.code, 'UNAUTHENTICATED');
    // Three signatures and the organisation seal made on completion.
    await assertAllValid(id, 4);
    const events = await server.app.deps.db
      .selectFrom('events')
      .select('event')
      .where('document_id', '=', id)
      .execute();
    assert.equal(events.filter((e) => e.event === 'documentCompleted').length, 1);
  });

  it('sequential: the members of an entity take its order and act together; once its quorum is in, the turn passes on', async () => {
    const id = await newDoc('Sequenced quorum');
    const shared = await share(id, {
      sequential: true,
      data: [
        { sharePurpose: 'sign', shareTo: 'after@example.org', order: 5 },
        { sharePurpose: 'sign', shareTo: 'ivy', userRoleId: 3 },
        { sharePurpose: 'sign', shareTo: 'jon', userRoleId: 3 },
      ],
      signEntities: [{ type: 'user', userRoleId: 3, quorum: 1, order: 1 }],
    });
    assert.equal(shared.status, 200, shared.text);
    const byName = Object.fromEntries(
      shared.body.map((s: { sharedWith: string[]; status: string; order: number }) => [
        s.sharedWith[0],
        [s.status, s.order],
      ]),
    );
    assert.deepEqual(byName, { ivy: ['active', 1], jon: ['active', 1], 'after@example.org': ['waiting', 5] });
    assert.deepEqual((await read(id)).waitingFor, ['ivy', 'jon', 'after@example.org']);

    assert.equal((await signAsUser('jon', id, 0.1)).status, 200);
    assert.deepEqual((await read(id)).waitingFor, ['after@example.org']);
    assert.equal((await statuses(id)).ivy, 'notRequired');
    const token = await linkOf(smtp, 'after@example.org', /Sequenced quorum/);
    const last = await signByLinkAt(token, id, 0.5);
    assert.equal(last.status, 200, last.text);
    assert.equal(last.body.shareStateName, 'completed');
    await assertAllValid(id, 3);
  });

  it('without signEntities, roles are recorded and every sign recipient signs; a field without `user` goes to the recipients of its role', async () => {
    const id = await newDoc('No entities');
    const shared = await share(id, {
      data: [
        { sharePurpose: 'sign', shareTo: 'ivy', userRoleId: 1 },
        { sharePurpose: 'sign', shareTo: 'jon', userRoleId: 1 },
        { sharePurpose: 'view', shareTo: 'kim' },
      ],
      signatureFields: [
        // Where signAsUser signs: recipients draw only in their fields (issue 40).
        { type: 'signature', userRoleId: 1, position: at(0.1, 0.85) },
        { type: 'initials', user: ['ivy'], position: at(0.5, 0.8) },
      ],
    });
    assert.equal(shared.status, 200, shared.text);
    assert.equal(shared.body[0].userRoleId, 1);
    assert.equal(shared.body[0].quorum, undefined);
    assert.deepEqual(
      shared.body.map((s: { signatureFields: { type: string }[] }) => s.signatureFields.map((f) => f.type)),
      [['signature', 'initials'], ['signature'], []],
    );
    assert.equal((await signAsUser('ivy', id, 0.1)).body.shareStateName, 'inprogress');
    assert.deepEqual((await read(id)).waitingFor, ['jon']);
  });
});

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { authenticate } from '../../src/auth/authenticate.js';
import type { Actor } from '../../src/core/access/actor.js';
import { getDocument } from '../../src/documents/get-document.js';
import { aDocument } from '../helpers/documents.js';
import { aUser, type AUser } from '../helpers/people.js';
import { shareDocument } from '../helpers/sharing.js';
import { mustSucceed } from '../helpers/server.js';
import { countingStatements } from '../helpers/statements.js';
import { useServer } from '../helpers/use-server.js';

/**
 * GET /documents/:id reads the document, what its view shows and whether its caller may see it in one
 * statement, shared by the reads that arrive in one turn of the event loop; POST /search, GET /inbox
 * and GET /share/document read theirs in one or two. Nothing is cached: each read starts after its
 * request arrived, so a change made a moment before counts (issue 26).
 */
describe('document reads: one statement for the reads of a turn, each answered as its own caller, never stale', () => {
  const server = useServer();
  /** alice, bob and carol of one organization, dave of another. */
  const people = {} as Record<'alice' | 'bob' | 'carol' | 'dave', AUser>;
  /** alice's: in her organization's shared folder, and at the root shared with carol for signing. */
  let inTeamFolder: string;
  let sharedWithCarol: string;

  before(async () => {
    for (const name of ['alice', 'bob', 'carol'] as const)
      people[name] = await aUser(server, { name, organization: 'Team' });
    people.dave = await aUser(server, { name: 'dave', organization: 'Elsewhere' });
    const { alice } = people;
    const folder = mustSucceed(
      await server.api('POST', '/folders', { token: alice.token, body: { name: 'Team', isShared: true } }),
      'POST /folders',
    ).body.id as string;
    inTeamFolder = await aDocument(server, alice.token, {
      title: 'Team contract',
      call: { optionalData: { folder } },
    });
    sharedWithCarol = await aDocument(server, alice.token, { title: 'For Carol' });
    await shareDocument(server, alice.token, sharedWithCarol, { to: 'carol' });
  });

  const read = (user: AUser, id: string) => server.api('GET', `/documents/${id}`, { token: user.token });

  it('reads by four callers of two documents, made together, take one statement and answer each caller as GET /documents/:id does', async () => {
    const { alice, bob, carol, dave } = people;
    const counted = countingStatements(server.app.deps.db);
    const deps = { ...server.app.deps, db: counted.db };
    const actors = new Map<AUser, Actor>();
    for (const user of [alice, bob, carol, dave]) {
      const authenticated = await authenticate(server.app.deps, user.token, 'test');
      assert.equal(authenticated.outcome, 'ok');
      if (authenticated.outcome === 'ok') actors.set(user, authenticated.actor);
    }
    const reads = [alice, bob, carol, dave].flatMap((user) =>
      [inTeamFolder, sharedWithCarol].map((id) => ({ user, id })),
    );
    counted.reset();
    const answers = await Promise.all(
      reads.map(({ user, id }) =>
        getDocument(deps, actors.get(user)!, id).then(
          (view) => view,
          (error: { statusCode?: number }) => error.statusCode,
        ),
      ),
    );
    assert.equal(counted.statements, 1);
    for (const [i, { user, id }] of reads.entries()) {
      const overHttp = await read(user, id);
      const answer = answers[i];
      if (overHttp.status === 200) assert.deepEqual(answer, overHttp.body.results[0], `${user.name} ${id}`);
      else assert.equal(answer, overHttp.status, `${user.name} ${id}`);
    }
    // The owner sees both; the organization the shared folder's; carol also what is shared with her;
    // someone of another organization nothing.
    assert.deepEqual(
      answers.map((answer) => (typeof answer === 'object' ? answer.documentTitle : answer)),
      ['Team contract', 'For Carol', 'Team contract', 404, 'Team contract', 'For Carol', 404, 404],
    );
  });

  it('a document moved out of the shared folder is gone from the very next read and search of a colleague', async () => {
    const { alice, bob } = people;
    assert.equal((await read(bob, inTeamFolder)).status, 200);
    const found = async () =>
      mustSucceed(
        await server.api('POST', '/search', { token: bob.token, body: {} }),
        'POST /search',
      ).body.results.map((r: { documentId: string }) => r.documentId) as string[];
    assert.ok((await found()).includes(inTeamFolder));
    const { _version } = (await read(alice, inTeamFolder)).body.results[0];
    mustSucceed(
      await server.api('PUT', `/documents/edit/${_version}`, {
        token: alice.token,
        body: { id: inTeamFolder, folder: null },
      }),
      'PUT /documents/edit',
    );
    assert.equal((await read(bob, inTeamFolder)).status, 404);
    assert.ok(!(await found()).includes(inTeamFolder));
  });

  it('a cancelled share leaves the recipient’s inbox and `waitingFor` at once; a suspended reader is refused at the next read', async () => {
    const { alice, carol } = people;
    const inbox = async () =>
      mustSucceed(await server.api('GET', '/inbox', { token: carol.token }), 'GET /inbox').body.results.map(
        (r: { sharedObjectEsId: string }) => r.sharedObjectEsId,
      ) as string[];
    assert.deepEqual(await inbox(), [sharedWithCarol]);
    assert.deepEqual((await read(alice, sharedWithCarol)).body.results[0].waitingFor, ['carol']);
    const shared = await server.api('GET', '/share/document', {
      token: carol.token,
      query: { id: sharedWithCarol },
    });
    assert.equal(shared.status, 200, shared.text);
    assert.equal(shared.body.results[0].share.status, 'active');
    mustSucceed(
      await server.api('POST', '/share/cancel', { token: alice.token, body: { id: sharedWithCarol } }),
      'POST /share/cancel',
    );
    assert.deepEqual(await inbox(), []);
    assert.deepEqual((await read(alice, sharedWithCarol)).body.results[0].waitingFor, []);
    const after = await server.api('GET', '/share/document', {
      token: carol.token,
      query: { id: sharedWithCarol },
    });
    assert.equal(after.body.results[0].share.status, 'cancelled');

    assert.equal((await read(carol, sharedWithCarol)).status, 200);
    mustSucceed(
      await server.api('PUT', `/users/${carol.id}`, {
        token: await server.adminToken(),
        body: { status: 'suspended' },
      }),
      'PUT /users/:id',
    );
    const refused = await read(carol, sharedWithCarol);
    assert.equal(refused.status, 401);
    assert.match(refused.body.message, /suspended/);
  });
});

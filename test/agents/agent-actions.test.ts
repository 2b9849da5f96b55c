import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { proposeAgentAction } from '../../src/agents/propose-agent-action.js';
import {
  INTERRUPTED_AFTER_MS,
  settleInterruptedActions,
} from '../../src/agents/settle-interrupted-actions.js';
import { authenticate } from '../../src/auth/authenticate.js';
import { ManualClock } from '../../src/base/clock.js';
import { assertError } from '../helpers/api-errors.js';
import { auditOf } from '../helpers/audit-log.js';
import { aDocument } from '../helpers/documents.js';
import { aUser, OWNER } from '../helpers/people.js';
import { decode } from '../helpers/smtp.js';
import { mustSucceed, type TestServer } from '../helpers/server.js';
import { anAgentKey } from './agent-keys.js';
import { useServer } from '../helpers/use-server.js';

/** What the agent holding `key` proposes, as the MCP tools do (src/mcp/tools.ts). */
async function propose(server: TestServer, key: string, tool: string, documentId: string, request: unknown) {
  const auth = await authenticate(server.app.deps, key, 'test-request');
  assert.equal(auth.outcome, 'ok');
  if (auth.outcome !== 'ok') throw new Error('the key did not authenticate');
  return proposeAgentAction(server.app.deps, auth.actor, { tool, documentId, request });
}

const shareOf = (documentId: string, to: string) => ({
  id: documentId,
  data: [{ sharePurpose: 'sign', shareTo: to }],
});

/**
 * Issue 42, Deliver 3: "A tool that would send mail, share, sign, seal, remind or delete does not act:
 * it creates a pending action … A person with the right to do the act approves or rejects it … only
 * then does it execute, with the approver as the actor and the agent recorded. An agent key can never
 * approve (its own or another's action). Pending actions expire (a setting)."
 */
describe('what an agent proposes waits for a person, who approves or rejects it', () => {
  const clock = new ManualClock();
  const server = useServer({ smtp: true, clock, env: { AGENT_ACTION_TTL_HOURS: '2' } });
  let owner: { token: string; name: string };
  let agentKey: string;
  before(async () => {
    owner = await aUser(server, OWNER);
    agentKey = await anAgentKey(server, owner.token);
  });

  it('a pending share sends nothing, is listed, and on approval is shared by the approver', async () => {
    const documentId = await aDocument(server, owner.token, { title: 'Lease 2027' });
    const pending = await propose(
      server,
      agentKey,
      'prepare_share',
      documentId,
      shareOf(documentId, 'kai@example.org'),
    );
    assert.equal(pending.state, 'pending');
    const listed = mustSucceed(await server.api('GET', '/agent-actions', { token: owner.token }), 'list');
    const item = listed.body.results.find((a: { id: string }) => a.id === pending.pendingActionId);
    assert.deepEqual(
      { tool: item.tool, state: item.state, documentId: item.documentId, createdBy: item.createdBy },
      { tool: 'prepare_share', state: 'pending', documentId, createdBy: OWNER.name },
    );
    const shares = await server.app.deps.db
      .selectFrom('shares')
      .select('id')
      .where('document_id', '=', documentId)
      .execute();
    assert.equal(shares.length, 0, 'no share before approval');
    const mails = await server.app.deps.db
      .selectFrom('jobs')
      .select('id')
      .where('type', '=', 'mail.send')
      .execute();
    assert.equal(
      mails.length,
      1,
      'one mail queued before approval: the one asking the key’s owner to decide',
    );
    const asking = decode((await server.smtp.waitFor(OWNER.email, /Approve or reject/)).raw);
    assert.match(asking, /Lease 2027/);
    assert.match(asking, /share it with kai@example\.org \(sign\)/);
    const links = [...asking.matchAll(/https?:\/\/[^\s"<>]+/g)].map((m) => m[0]);
    assert.ok(links.length > 0, 'the mail links to the approval page');
    for (const link of new Set(links))
      assert.equal(
        new URL(link).pathname,
        `/approve/${pending.pendingActionId}`,
        'no credential in the link',
      );
    assert.ok(!asking.includes(agentKey), 'the key itself is not in the mail (its public id is)');
    assert.doesNotMatch(asking, /shr_|token=/, 'no token in the mail');
    assert.ok(
      !server.smtp.messages.some((m) => m.to.includes('kai@example.org')),
      'the recipient got nothing yet',
    );

    const approved = mustSucceed(
      await server.api('POST', `/agent-actions/${pending.pendingActionId}/approve`, { token: owner.token }),
      'approve',
    );
    assert.equal(approved.body.state, 'executed');
    assert.equal(approved.body.decidedBy, OWNER.name);
    await server.smtp.waitFor('kai@example.org', /Lease 2027/);
    const trail = (await auditOf(server, documentId)).map((r) => r.activityType);
    assert.deepEqual(
      trail.filter((a) => a.startsWith('agent') || a === 'documentShared'),
      ['agentActionCreated', 'agentActionApproved', 'documentShared'],
      'the trail reads: proposed, approved by the person, then shared',
    );
    const shared = await server.app.deps.db
      .selectFrom('audit_log')
      .select('actor_id')
      .where('object_id', '=', documentId)
      .where('activity_type', '=', 'documentShared')
      .executeTakeFirstOrThrow();
    assert.equal(shared.actor_id, OWNER.name, 'the approver is the actor of the act');
  });

  it('an agent key cannot approve, its own action or another’s, and the proposing key cannot either', async () => {
    const documentId = await aDocument(server, owner.token);
    const pending = await propose(
      server,
      agentKey,
      'prepare_share',
      documentId,
      shareOf(documentId, 'lee@example.org'),
    );
    const otherAgent = await anAgentKey(server, owner.token);
    for (const key of [agentKey, otherAgent]) {
      const refused = await server.api('POST', `/agent-actions/${pending.pendingActionId}/approve`, {
        token: key,
      });
      assertError(refused, 403, 'FORBIDDEN');
    }
    const plainKey = await anAgentKey(server, owner.token, {});
    const byPlain = await propose(
      server,
      plainKey,
      'prepare_share',
      documentId,
      shareOf(documentId, 'lee@example.org'),
    );
    const ownApproval = await server.api('POST', `/agent-actions/${byPlain.pendingActionId}/approve`, {
      token: plainKey,
    });
    assertError(ownApproval, 403, 'FORBIDDEN');
    const shares = await server.app.deps.db
      .selectFrom('shares')
      .select('id')
      .where('document_id', '=', documentId)
      .execute();
    assert.equal(shares.length, 0);
  });

  it('an expired pending action cannot be approved', async () => {
    const documentId = await aDocument(server, owner.token);
    const pending = await propose(
      server,
      agentKey,
      'prepare_share',
      documentId,
      shareOf(documentId, 'max@example.org'),
    );
    clock.advance(2 * 3_600_000 + 1000);
    const refused = await server.api('POST', `/agent-actions/${pending.pendingActionId}/approve`, {
      token: owner.token,
    });
    assertError(refused, 409, 'CONFLICT', 'expired');
    const listed = mustSucceed(
      await server.api('GET', '/agent-actions', {
        token: owner.token,
        query: { state: 'expired', documentId },
      }),
      'list expired',
    );
    assert.deepEqual(
      listed.body.results.map((a: { id: string }) => a.id),
      [pending.pendingActionId],
    );
  });

  it('a rejected action is never done, and the agent reads the reason', async () => {
    const documentId = await aDocument(server, owner.token);
    const pending = await propose(
      server,
      agentKey,
      'prepare_share',
      documentId,
      shareOf(documentId, 'ned@example.org'),
    );
    const rejected = mustSucceed(
      await server.api('POST', `/agent-actions/${pending.pendingActionId}/reject`, {
        token: owner.token,
        body: { reason: 'wrong client' },
      }),
      'reject',
    );
    assert.deepEqual([rejected.body.state, rejected.body.outcome], ['rejected', { reason: 'wrong client' }]);
    const again = await server.api('POST', `/agent-actions/${pending.pendingActionId}/approve`, {
      token: owner.token,
    });
    assertError(again, 409, 'CONFLICT');
    assert.deepEqual(
      (await auditOf(server, documentId)).map((r) => r.activityType).filter((a) => a.startsWith('agent')),
      ['agentActionCreated', 'agentActionRejected'],
    );
    // The reason is optional, and so is the body (documented so: requestBody.required false).
    const another = await propose(
      server,
      agentKey,
      'prepare_share',
      documentId,
      shareOf(documentId, 'ned@example.org'),
    );
    const bare = mustSucceed(
      await server.api('POST', `/agent-actions/${another.pendingActionId}/reject`, { token: owner.token }),
      'reject without a body',
    );
    assert.deepEqual([bare.body.state, bare.body.outcome], ['rejected', null]);
  });

  it('an approved act whose node died before it finished is settled as interrupted, never pending again', async () => {
    const documentId = await aDocument(server, owner.token);
    const pending = await propose(
      server,
      agentKey,
      'prepare_share',
      documentId,
      shareOf(documentId, 'uma@example.org'),
    );
    const { db } = server.app.deps;
    // What approval's claim writes before it runs the act (approve-agent-action.ts), left so by a node
    // killed before the act finished.
    await db
      .updateTable('agent_actions')
      .set({ state: 'executing', decided_by: OWNER.name, decided_at: clock.now().toISOString() })
      .where('id', '=', pending.pendingActionId)
      .execute();
    clock.advance(INTERRUPTED_AFTER_MS - 60_000);
    assert.equal(
      await settleInterruptedActions(server.app.deps, clock.now()),
      0,
      'an act may still be running',
    );
    clock.advance(2 * 60_000);
    assert.equal(await settleInterruptedActions(server.app.deps, clock.now()), 1);
    assert.equal(await settleInterruptedActions(server.app.deps, clock.now()), 0, 'settled once');
    const read = mustSucceed(
      await server.api('GET', `/agent-actions/${pending.pendingActionId}`, { token: owner.token }),
      'GET /agent-actions/{id}',
    );
    assert.deepEqual([read.body.state, read.body.decidedBy], ['interrupted', OWNER.name]);
    assertError(
      await server.api('POST', `/agent-actions/${pending.pendingActionId}/approve`, { token: owner.token }),
      409,
      'CONFLICT',
    );
    assert.deepEqual(
      (await auditOf(server, documentId)).map((r) => r.activityType).filter((a) => a.startsWith('agent')),
      ['agentActionCreated', 'agentActionInterrupted'],
    );
    const events = await db
      .selectFrom('events')
      .select('event')
      .where('document_id', '=', documentId)
      .orderBy('occurred_at')
      .execute();
    assert.deepEqual(
      events.map((e) => e.event).filter((e) => e.startsWith('agent')),
      ['agentActionPending', 'agentActionInterrupted'],
      'the agent waiting on the feed hears it',
    );
  });

  it('another user does not see the action: 404, never 403', async () => {
    const documentId = await aDocument(server, owner.token);
    const pending = await propose(
      server,
      agentKey,
      'prepare_share',
      documentId,
      shareOf(documentId, 'ola@example.org'),
    );
    const stranger = await aUser(server, { name: 'stranger' });
    const answer = await server.api('POST', `/agent-actions/${pending.pendingActionId}/approve`, {
      token: stranger.token,
    });
    assertError(answer, 404, 'NOT_FOUND');
    assertError(
      await server.api('GET', `/agent-actions/${pending.pendingActionId}`, { token: stranger.token }),
      404,
      'NOT_FOUND',
    );
    const read = mustSucceed(
      await server.api('GET', `/agent-actions/${pending.pendingActionId}`, { token: owner.token }),
      'GET /agent-actions/{id}',
    );
    assert.deepEqual(
      [read.body.id, read.body.state, read.body.request],
      [pending.pendingActionId, 'pending', shareOf(documentId, 'ola@example.org')],
      'the owner reads the exact request approval would execute',
    );
    const listed = mustSucceed(await server.api('GET', '/agent-actions', { token: stranger.token }), 'list');
    assert.equal(listed.body.results.length, 0);
  });

  it('an agent key and a read-only key only read on the API', async () => {
    const readOnly = await anAgentKey(server, owner.token, { readOnly: true });
    for (const key of [agentKey, readOnly]) {
      assertError(await server.api('POST', '/api/key', { token: key, body: {} }), 403, 'FORBIDDEN');
      mustSucceed(await server.api('GET', '/api/key', { token: key }), 'GET /api/key');
    }
  });
});

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pem } from '../../src/pki/dev-ca.js';
import { aDocument, mainFileOf, readDocument, signDocument } from '../helpers/documents.js';
import { anOwnerAndTwoSigners } from '../helpers/people.js';
import { mustSucceed, USER_PASSWORD } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { useWorkspace } from '../pdf/oracles.js';
import { anAgentKey } from './agent-keys.js';

/**
 * Issue 42, Must show: "The completed document's embedded trail, checked by `signery verify`, lists
 * the agent's tool calls and the approval." `signery verify` runs as a stranger would: its own
 * process, with no Signery data or database it could reach.
 */
describe('an agent’s acts are evidence: the completed document’s embedded trail lists them', () => {
  const server = useServer({ smtp: true });
  const space = useWorkspace();

  it('signery verify reads, from the file alone, the agent’s tool call, the approval by a person and the signature that followed, all intact', async () => {
    const owner = await anOwnerAndTwoSigners(server);
    const id = await aDocument(server, owner, { title: 'Agent-prepared lease' });
    const key = await anAgentKey(server, owner);
    const agent = new Client({ name: 'signery-test', version: '1.0.0' });
    await agent.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    const proposed = (await agent.callTool({
      name: 'prepare_share',
      arguments: { id, data: [{ sharePurpose: 'sign', shareTo: 'ivy' }] },
    })) as { content: { text: string }[] };
    await agent.close();
    const { pendingActionId, state } = JSON.parse(proposed.content[0]!.text);
    assert.equal(state, 'pending');

    const admin = await server.adminToken();
    mustSucceed(
      await server.api('POST', `/agent-actions/${pendingActionId}/approve`, { token: admin }),
      'approve',
    );
    const ivy = await server.login('ivy', USER_PASSWORD);
    const signed = await signDocument(server, ivy, id, [
      {
        type: 'signature',
        position: { percentX: 0.1, percentY: 0.8, percentWidth: 0.25, percentHeight: 0.08 },
      },
    ]);
    assert.equal(signed.status, 200, signed.text);
    assert.equal((await readDocument(server, owner, id)).workflow.shareStateName, 'completed');

    const pdf = await mainFileOf(server, owner, id);
    const root = (await server.app.deps.seal()).trustAnchors[0]!;
    const run = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli.ts',
        'verify',
        await space.write('lease.pdf', pdf),
        '--trust',
        await space.write('root.pem', pem('CERTIFICATE', root)),
      ],
      {
        env: {
          PATH: process.env.PATH ?? '',
          DATA_DIR: '/nonexistent/signery-data',
          DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
        },
        encoding: 'utf8',
        timeout: 120_000,
      },
    );
    assert.equal(run.status, 0, run.stderr || run.stdout);
    const report = JSON.parse(run.stdout);
    assert.equal(report.verdict, 'valid');
    assert.deepEqual([report.auditTrail.present, report.auditTrail.intact], [true, true]);
    const events = report.auditTrail.events as {
      activityType: string;
      actor: string | null;
      intact: boolean;
    }[];
    assert.ok(
      events.every((e) => e.intact),
      'every event of the trail recomputes',
    );
    const activities = events.map((e) => e.activityType);
    const toolCall = activities.indexOf('agentToolCall');
    const approved = activities.indexOf('agentActionApproved');
    const sharedAt = activities.indexOf('documentShared');
    const signedAt = activities.indexOf('documentSigned');
    assert.ok(toolCall >= 0, `the agent's tool call is in the trail: ${activities.join()}`);
    assert.ok(approved > toolCall, `then the approval: ${activities.join()}`);
    assert.ok(sharedAt === -1 || sharedAt > approved, `the share only after it: ${activities.join()}`);
    assert.ok(signedAt > approved, `and the signature last: ${activities.join()}`);
    assert.notEqual(
      events[approved]!.actor,
      events[toolCall]!.actor,
      'approved by a person, not by the agent',
    );
  });
});

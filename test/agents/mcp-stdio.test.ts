import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';
import { anAgentKey } from './agent-keys.js';

/** Issue 42, Deliver 1: "`signery mcp` over stdio", with the key's rights, as the HTTP server has them. */
describe('signery mcp: the MCP server over stdio', () => {
  const server = useServer();
  it('a stdio client lists the tools and calls one through the installation', async () => {
    const owner = await aUser(server, { name: 'stdio-owner' });
    const key = await anAgentKey(server, owner.token, { agent: true, readOnly: true });
    const client = new Client({ name: 'signery-stdio-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', 'src/cli.ts', 'mcp'],
        env: { ...process.env, SIGNERY_URL: server.url, SIGNERY_API_KEY: key },
      }),
    );
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.some((t) => t.name === 'find_documents'));
      assert.ok(!tools.some((t) => t.name === 'prepare_share'), 'the read-only key’s rights hold over stdio');
      const answer = (await client.callTool({ name: 'find_documents', arguments: {} })) as {
        isError?: boolean;
      };
      assert.notEqual(answer.isError, true);
    } finally {
      await client.close();
    }
  });
});

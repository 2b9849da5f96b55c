import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

/**
 * `signery mcp`: the MCP server over stdio, for clients that start a local process. It relays each
 * message to the installation's /mcp with the API key, so the key's rights, rate limit, the approval
 * of every send and the audit records are those of the HTTP server: one server, two transports.
 * Nothing but MCP messages goes to standard output; problems go to standard error.
 */
export async function bridgeStdioToHttp(options: { url: string; apiKey: string }): Promise<void> {
  const local = new StdioServerTransport();
  const remote = new StreamableHTTPClientTransport(new URL('/mcp', options.url), {
    requestInit: { headers: { authorization: `Bearer ${options.apiKey}` } },
  });
  const complain = (error: unknown) =>
    process.stderr.write(`signery mcp: ${error instanceof Error ? error.message : String(error)}\n`);
  local.onmessage = (message) => void remote.send(message).catch(complain);
  remote.onmessage = (message) => void local.send(message).catch(complain);
  remote.onerror = complain;
  local.onerror = complain;
  local.onclose = () => void remote.close();
  await remote.start();
  await local.start();
}

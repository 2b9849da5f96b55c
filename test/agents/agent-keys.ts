import { mustSucceed, type TestServer } from '../helpers/server.js';

/** An API key of `token`'s user for an agent (POST /api/key with `agent`, or the flags given). */
export async function anAgentKey(
  server: TestServer,
  token: string,
  flags: Record<string, boolean> = { agent: true },
): Promise<string> {
  const created = await server.api('POST', '/api/key', {
    token,
    body: { description: 'assistant', ...flags },
  });
  return mustSucceed(created, 'POST /api/key').body.id as string;
}

/**
 * The load generator of bench/api, run by load.ts in a process of its own (pinned to the load
 * generator's CPU): autocannon's API, for what its CLI cannot do.
 * - `paths`: several paths (one per token), each connection going through them from its own offset,
 *   so requests that arrive together carry different tokens as different callers' would.
 * - `expect`: a text every answer's body must contain; the others are counted as mismatches (GET
 *   /login answers 200 `{logged:false}` to a token it did not accept, which a status cannot tell).
 * Prints autocannon's result as one JSON line, as its CLI's --json does.
 *
 * Usage: node --import tsx bench/api/autocannon.ts '<JSON of AutocannonJob>'
 */
import autocannon from 'autocannon';

export interface AutocannonJob {
  /** The server's origin, http://127.0.0.1:port. */
  origin: string;
  paths: string[];
  connections: number;
  seconds: number;
  method: 'GET' | 'POST';
  body?: string;
  expect?: string;
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2] ?? '') as AutocannonJob;
  const requests = job.paths.map((path) => ({
    method: job.method,
    path,
    ...(job.body !== undefined ? { body: job.body, headers: { 'content-type': 'application/json' } } : {}),
  }));
  let connection = 0;
  const result = await autocannon({
    url: job.origin,
    connections: job.connections,
    duration: job.seconds,
    requests,
    // Connection i starts at path i: with as many paths as connections, no two ask with one token.
    setupClient: (client) => {
      const offset = connection++ % requests.length;
      client.setRequests([...requests.slice(offset), ...requests.slice(0, offset)]);
    },
    ...(job.expect !== undefined ? { verifyBody: (body: string) => body.includes(job.expect!) } : {}),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

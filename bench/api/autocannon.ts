/**
 * The load generator of bench/api, run by load.ts in a process of its own (pinned to the load
 * generator's CPU): autocannon's API, for what its CLI cannot do.
 * - `requests`: several requests (one per token, or per document), each connection going through them
 *   from its own offset, so requests that arrive together carry different tokens as different
 *   callers' would.
 * - `expect`: a text every answer's body must contain; the others are counted as mismatches (GET
 *   /login answers 200 `{logged:false}` to a token it did not accept, which a status cannot tell).
 * - a request's `answer`: the exact body it must get (a document read before the run); any other
 *   body is counted as a mismatch too, so an answer meant for another request would show.
 * Prints autocannon's result as one JSON line, as its CLI's --json does.
 *
 * Usage: node --import tsx bench/api/autocannon.ts < '<JSON of AutocannonJob>'
 * (on stdin: the expected answers can be more than one command-line argument may hold).
 */
import { text } from 'node:stream/consumers';
import autocannon from 'autocannon';

export interface LoadRequest {
  path: string;
  /** JSON request body (sent with content-type: application/json). */
  body?: string;
  /** The exact answer expected. */
  answer?: string;
}

export interface AutocannonJob {
  /** The server's origin, http://127.0.0.1:port. */
  origin: string;
  requests: LoadRequest[];
  connections: number;
  seconds: number;
  method: 'GET' | 'POST';
  expect?: string;
}

async function main(): Promise<void> {
  const job = JSON.parse(await text(process.stdin)) as AutocannonJob;
  let wrongAnswers = 0;
  const requests = job.requests.map(({ path, body, answer }) => ({
    method: job.method,
    path,
    ...(body !== undefined ? { body, headers: { 'content-type': 'application/json' } } : {}),
    ...(answer !== undefined
      ? {
          onResponse: (status: number, received: string) => {
            if (status < 300 && received !== answer) wrongAnswers++;
          },
        }
      : {}),
  }));
  let connection = 0;
  const result = await autocannon({
    url: job.origin,
    connections: job.connections,
    duration: job.seconds,
    requests,
    // Connection i starts at request i: with as many requests as connections, no two ask with one token.
    setupClient: (client) => {
      const offset = connection++ % requests.length;
      client.setRequests([...requests.slice(offset), ...requests.slice(0, offset)]);
    },
    ...(job.expect !== undefined ? { verifyBody: (body: string) => body.includes(job.expect!) } : {}),
  });
  process.stdout.write(`${JSON.stringify({ ...result, mismatches: result.mismatches + wrongAnswers })}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

import { Server as NetServer } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Lets a node leave a load balancer without losing a request (docs/operations.md: rolling restart
 * behind nginx).
 *
 * A proxy keeps connections to the node open and may send a request on any of them at any moment: a
 * node that closes an idle kept-alive connection can close it under a request the proxy has just sent,
 * which the proxy then answers 502 (nginx sends a GET again elsewhere, never a POST). So draining
 * closes only the listening socket — new connections are refused, which the proxy retries on another
 * node and counts as that node's failure — answers every request still arriving on an open connection
 * with `Connection: close`, and leaves the idle ones for the proxy to close (its keep-alive timeout),
 * until no connection is left or `maxMs` has passed. The usual close (App.close) follows.
 *
 * ```ts
 * const drain = drainer(server.server); // before the server listens
 * …
 * await drain(10_000);
 * await app.close();
 * ```
 */
export function drainer(http: HttpServer): (maxMs: number) => Promise<void> {
  let draining = false;
  // First among the request listeners, so the header is there before any answer is written.
  http.prependListener('request', (_request, response) => {
    if (draining) response.setHeader('connection', 'close');
  });
  return async (maxMs) => {
    draining = true;
    // net.Server's close, not http.Server's: that one also closes the idle connections (Node ≥ 19).
    if (http.listening) NetServer.prototype.close.call(http);
    const until = Date.now() + maxMs;
    while (Date.now() < until && (await openConnections(http)) > 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
}

function openConnections(server: NetServer): Promise<number> {
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? 0 : count)));
}

/**
 * Requests whose body is still arriving (a slow upload), so that the end of a drain can answer them
 * rather than let the forced exit reset their connection: `cutOff` fails each one's body stream with
 * `error` (a 503 with Retry-After: nothing of it was done, the client sends it again), which the
 * handler reading it throws and the error handler answers, and logs a line for each. Requests whose
 * body has arrived are left to finish (App.close waits for them): their work may be done already.
 *
 * ```ts
 * const uploads = unfinishedBodies(server); // before the routes
 * …
 * await drain(10_000);
 * uploads.cutOff(() => new ShuttingDown(5));
 * ```
 */
export function unfinishedBodies(server: FastifyInstance): { cutOff(error: () => Error): number } {
  const inFlight = new Set<FastifyRequest>();
  server.addHook('onRequest', async (request, reply) => {
    inFlight.add(request);
    reply.raw.once('close', () => inFlight.delete(request));
  });
  return {
    cutOff(error) {
      let cut = 0;
      for (const request of inFlight) {
        const body = request.raw;
        // Not read yet (no reader listens): nothing to fail; the close lets it finish.
        if (body.complete || body.listenerCount('error') === 0) continue;
        request.log.warn(
          { req: request },
          'shutting down: the request body was still arriving at the end of the drain; answered 503 with Retry-After',
        );
        body.emit('error', error());
        // The rest of the body is read and dropped, so the answer is not lost to a reset.
        body.resume();
        cut += 1;
      }
      return cut;
    },
  };
}

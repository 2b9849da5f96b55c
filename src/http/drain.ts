import { Server as NetServer } from 'node:net';
import type { Server as HttpServer } from 'node:http';

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

import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback port free now, for a process that must come back on the same port after a restart (a
 * node behind a proxy whose configuration names it). Another process could take it meanwhile; on a
 * test machine that is rare enough.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

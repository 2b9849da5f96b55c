import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on loopback in front of a real server (PostgreSQL), to take the network away from a
 * node the way an outage does: `refuse()` closes every connection and refuses new ones (a database
 * restart), `blackhole()` keeps connections open but forwards nothing (a partition: packets vanish),
 * `restore()` forwards again.
 */
export interface TcpProxy {
  port: number;
  /** The local ports of the proxy's connections to the target (the server sees them as client ports). */
  upstreamPorts(): number[];
  refuse(): void;
  /** Resets the next connection as soon as it is accepted, as a server closing a kept-alive one does. */
  resetNext(): void;
  blackhole(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let mode: 'forward' | 'refuse' | 'blackhole' = 'forward';
  let resets = 0;
  const sockets = new Set<Socket>();
  const upstreams = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (mode === 'refuse' || resets > 0) {
      if (resets > 0) resets--;
      client.destroy();
      return;
    }
    const upstream = createConnection(target);
    track(upstream);
    upstreams.add(upstream);
    upstream.on('close', () => upstreams.delete(upstream));
    // Bytes are forwarded only while the proxy forwards: in a partition they are dropped.
    client.on('data', (chunk) => {
      if (mode === 'forward') upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (mode === 'forward') client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('proxy has no port');
  return {
    port: address.port,
    upstreamPorts: () => [...upstreams].flatMap((s) => (s.localPort === undefined ? [] : [s.localPort])),
    refuse() {
      mode = 'refuse';
      for (const socket of sockets) socket.destroy();
    },
    resetNext() {
      resets++;
    },
    blackhole() {
      mode = 'blackhole';
    },
    restore() {
      mode = 'forward';
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The benchmark's webhook receiver, in a process of its own so that its CPU is not counted as the
 * server's (a real receiver runs elsewhere). Started by run.ts; listens on loopback, prints its URL
 * as the first IPC message, then reports what arrived every 20 ms: the number of distinct
 * deliveries, duplicates, and the delay of each from its event's `timestamp`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReceiverMessage =
  { type: 'listening'; url: string } | { type: 'arrived'; delays: number[]; duplicates: number };

const send = (message: ReceiverMessage) => process.send?.(message);
const seen = new Set<string>();
let delays: number[] = [];
let duplicates = 0;

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const arrived = Date.now();
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
    const delivery = String(request.headers['x-signery-delivery']);
    if (seen.has(delivery)) duplicates += 1;
    else {
      seen.add(delivery);
      delays.push(arrived - Date.parse(body.timestamp));
    }
    response.writeHead(204).end();
  });
});
server.keepAliveTimeout = 10_000;

setInterval(() => {
  if (delays.length === 0 && duplicates === 0) return;
  send({ type: 'arrived', delays, duplicates });
  delays = [];
  duplicates = 0;
}, 20);

// The benchmark ends this process by disconnecting.
process.on('disconnect', () => process.exit(0));

server.listen(0, '127.0.0.1', () => {
  send({ type: 'listening', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
});

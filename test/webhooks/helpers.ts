import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestServer } from '../helpers/server.js';
import { useStarted } from '../helpers/use-server.js';
import { writeTransaction } from '../../src/store/db/dialect.js';
import { emitEvent, type EventName } from '../../src/core/events/emit-event.js';
import { signBody } from '../../src/webhooks/signature.js';
import { timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/db/schema.js';

export interface Received {
  body: string;
  json: { documentId: string; event: string; actor: string; timestamp: string };
  headers: IncomingHttpHeaders;
  /** What the receiver answered. */
  status: number;
}

/**
 * A webhook receiver on loopback. `respond` picks the status of each request (200 by default);
 * `delayMs` holds each answer back.
 */
export interface Receiver {
  url: string;
  received: Received[];
  respond: (request: Received, index: number) => number;
  delayMs: number;
  close(): Promise<void>;
}

export async function startReceiver(respond: Receiver['respond'] = () => 200): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    respond,
    delayMs: 0,
    close: () => Promise.resolve(),
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry: Received = { body, json: JSON.parse(body), headers: request.headers, status: 0 };
      entry.status = receiver.respond(entry, receiver.received.length);
      receiver.received.push(entry);
      const answer = () => response.writeHead(entry.status, { 'content-type': 'text/plain' }).end('ok');
      if (receiver.delayMs > 0) setTimeout(answer, receiver.delayMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

/** A webhook receiver for the enclosing describe, started in its `before` hook and closed in its `after` hook. */
export function useReceiver(respond?: Receiver['respond']): Receiver {
  return useStarted(
    'the webhook receiver',
    () => startReceiver(respond),
    (receiver) => receiver.close(),
  );
}

/** The delivery a request belongs to (`x-signery-delivery`, the same on every attempt). */
export function deliveryIdOf(entry: Received): string {
  return String(entry.headers['x-signery-delivery']);
}

/** How many times each delivery arrived. */
export function timesReceived(receiver: Receiver): Map<string, number> {
  const times = new Map<string, number>();
  for (const entry of receiver.received)
    times.set(deliveryIdOf(entry), (times.get(deliveryIdOf(entry)) ?? 0) + 1);
  return times;
}

/**
 * The deliveries in flight when the worker's process was killed (call it at once, before another
 * worker starts): those the receiver got whose success the database does not record — sent, or
 * answered while their record was still being written. At-least-once delivery may send these again,
 * and only these.
 */
export async function inFlightAtCrash(db: Kysely<Database>, receiver: Receiver): Promise<Set<string>> {
  // A request the receiver had read whole when the sender died is taken in at its next turn.
  await sleep(200);
  const received = new Set(receiver.received.map(deliveryIdOf));
  const recorded = await db
    .selectFrom('webhook_attempts')
    .select('delivery_id')
    .where('success', '=', 1)
    .execute();
  for (const { delivery_id } of recorded) received.delete(delivery_id);
  return received;
}

/** Polls until `condition` holds (or fails the test after `timeoutMs`). */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What a receiver does: HMAC-SHA256 of the raw body, compared in constant time. */
export function signatureValid(entry: Received, secret: string): boolean {
  const expected = Buffer.from(signBody(secret, entry.body), 'hex');
  const given = Buffer.from(String(entry.headers['x-signery-signature'] ?? ''), 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The tenant and organization of a user, read from the database. */
export async function scopeOf(
  server: TestServer,
  userName: string,
): Promise<{ tenantId: string; organizationId: string }> {
  const row = await server.app.deps.db
    .selectFrom('users')
    .select(['tenant_id', 'organization_id'])
    .where('name', '=', userName)
    .executeTakeFirstOrThrow();
  return { tenantId: row.tenant_id, organizationId: row.organization_id };
}

/** Emits an event the way a document change does: inside a writeTransaction. */
export async function emit(
  server: TestServer,
  scope: { tenantId: string; organizationId: string },
  event: EventName,
  documentId: string,
  actor = 'admin@example.test',
): Promise<string[]> {
  const at = server.app.deps.clock.now();
  const { db } = server.app.deps;
  const { eventId } = await writeTransaction(db, server.app.deps.dialect, (trx) =>
    emitEvent(trx, { ...scope, documentId, event, actor, at }),
  );
  const deliveries = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('event_id', '=', eventId)
    .orderBy('webhook_id')
    .execute();
  return deliveries.map((delivery) => delivery.id);
}

export async function createWebhook(
  server: TestServer,
  token: string,
  body: Record<string, unknown>,
): Promise<{ id: string; hmacSecret: string; name: string; type: string }> {
  const response = await server.api('POST', '/webhooks', { token, body });
  if (response.status !== 200)
    throw new Error(`creating a webhook failed: ${response.status} ${response.text}`);
  return response.body;
}

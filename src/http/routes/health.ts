import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { withDeadline } from '../../base/deadline.js';
import type { BlobStore } from '../../store/blobs/blob-store.js';
import type { DatabaseHandle } from '../../store/db/dialect.js';
import type { Database } from '../../store/db/schema.js';
import { errorBody } from '../error-handler.js';

/** Readiness answers within this, so a load balancer sees a partition as "not ready" at once. */
const READY_DEADLINE_MS = 1_000;

const Up = Type.Object(
  { status: Type.Literal('ok') },
  { description: 'The process is up.', examples: [{ status: 'ok' }] },
);
const Ready = Type.Object(
  { status: Type.Literal('ok'), database: Type.Literal('ok'), blobs: Type.Literal('ok') },
  {
    description: 'The database and the blob store answer.',
    examples: [{ status: 'ok', database: 'ok', blobs: 'ok' }],
  },
);
const NotReady = Type.Object(
  {
    statusCode: Type.Integer(),
    error: Type.String(),
    message: Type.String(),
    code: Type.String(),
    status: Type.Optional(Type.Literal('draining')),
    database: Type.Optional(Type.String()),
    blobs: Type.Optional(Type.String()),
  },
  {
    description:
      'Not ready: a store does not answer (each named `ok` or `unavailable`), or the node is stopping.',
  },
);

/** Liveness and readiness: GET /healthz (and GET /api/v1/ping, which older clients call first), GET /readyz. */
export function healthRoutes(
  app: FastifyInstance,
  stores: {
    database: DatabaseHandle<Database>;
    blobs: BlobStore;
    /** Whether the node is draining before a stop (App.drain): it takes no new work. */
    draining?: () => boolean;
  },
): void {
  // Probes are never rate limited: a load balancer polling them must not take a node out.
  const alive = (operationId: string) => ({
    config: { auth: 'none' as const, rateLimit: false },
    schema: { tags: ['health'], operationId, summary: 'The process is up', response: { 200: Up } },
  });
  app.get('/healthz', alive('checkHealth'), async () => ({ status: 'ok' }));
  app.get('/api/v1/ping', alive('pingApi'), async () => ({ status: 'ok' }));
  app.get(
    '/readyz',
    {
      config: { auth: 'none', rateLimit: false },
      schema: {
        tags: ['health'],
        operationId: 'checkReadiness',
        summary: 'The database and the blob store answer',
        description:
          'For load balancers: 503 while a store does not answer within a second, or while the node stops.',
        response: { 200: Ready, 503: NotReady },
      },
    },
    async (request, reply) => {
      // A balancer that checks health on a connection it keeps stops sending here at once.
      if (stores.draining?.()) {
        return reply
          .status(503)
          .send({ ...errorBody(503, 'Not ready: the node is shutting down'), status: 'draining' });
      }
      const checks = await Promise.allSettled([
        withDeadline(stores.database.ping(), READY_DEADLINE_MS),
        withDeadline(stores.blobs.ping(), READY_DEADLINE_MS),
      ]);
      const [database, blobs] = checks.map((c) => (c.status === 'fulfilled' ? 'ok' : 'unavailable'));
      if (database === 'ok' && blobs === 'ok') return { status: 'ok', database, blobs };
      for (const check of checks)
        if (check.status === 'rejected') request.log.warn({ err: check.reason }, 'not ready');
      return reply
        .status(503)
        .send({ ...errorBody(503, `Not ready: database ${database}, blobs ${blobs}`), database, blobs });
    },
  );
}

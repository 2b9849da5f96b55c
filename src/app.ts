import fastifyCookie from '@fastify/cookie';
import fastifyMultipart from '@fastify/multipart';
import fastifySwagger from '@fastify/swagger';
import { confineFilesOrigin, fileOriginRoutes } from './http/routes/file-origin.js';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { systemClock, type Clock } from './base/clock.js';
import { ConfigError, type Config } from './base/config.js';
import { ShuttingDown } from './base/errors.js';
import type { Deps } from './core/deps.js';
import { loadSecretKey, useSecretKey } from './store/secret-box.js';
import { registerAuthentication } from './http/authentication.js';
import { answerClientError, answerFrameworkError, registerErrorHandlers } from './http/error-handler.js';
import { drainer, unfinishedBodies } from './http/drain.js';
import { registerJsonParser } from './http/json-body.js';
import { registerMetrics } from './http/metrics.js';
import { RATE_LIMIT_WINDOW_SECONDS, rateLimitAdmission } from './http/rate-limits.js';
import { requestIdOf } from './http/request-id.js';
import { logAbortedRequests, OneLinePerRequest } from './http/request-logging.js';
import { MULTIPART_LIMITS } from './http/multipart.js';
import {
  REDACT_PATHS,
  redactLogArguments,
  redactUrl,
  serializeError,
  withoutCredentials,
} from './http/redact.js';
import { attachmentRoutes } from './http/routes/attachments.js';
import { authRoutes } from './http/routes/auth.js';
import { oidcRoutes } from './http/routes/oidc.js';
import { definitionRoutes } from './http/routes/definitions.js';
import { documentRoutes } from './http/routes/documents.js';
import { draftRoutes } from './http/routes/drafts.js';
import { folderRoutes } from './http/routes/folders.js';
import { sharingRoutes } from './http/routes/sharing.js';
import { sharedDocumentRoutes } from './http/routes/shared-document.js';
import { shareActionRoutes } from './http/routes/share-actions.js';
import { shareUnlockRoutes } from './http/routes/share-unlock.js';
import { inboxRoutes } from './http/routes/inbox.js';
import { signingRoutes } from './http/routes/signing.js';
import { twoStepRoutes } from './http/routes/two-step.js';
import { searchRoutes } from './http/routes/search.js';
import { auditRoutes } from './http/routes/audit.js';
import { sweepScrollContexts } from './core/scroll.js';
import { BYTES_REMOVAL_JOB, removeBytes, type BytesRemovalPayload } from './core/files/bytes-removal.js';
import { shareUploadRoutes } from './http/routes/share-uploads.js';
import { shareOidcRoutes } from './http/routes/share-oidc.js';
import { stampRoutes } from './http/routes/stamps.js';
import { contactRoutes } from './http/routes/contacts.js';
import { enumRoutes } from './http/routes/enums.js';
import { templateRoutes } from './http/routes/templates.js';
import { fileRoutes } from './http/routes/files.js';
import { healthRoutes } from './http/routes/health.js';
import { settingsRoutes } from './http/routes/settings.js';
import { signerPageRoutes } from './http/routes/signer-page.js';
import { shareLinkStanding } from './core/sharing/recipient.js';
import { publicVerifyRoutes } from './http/routes/public-verify.js';
import { devPkiRoutes } from './http/routes/dev-pki.js';
import { userRoutes } from './http/routes/users.js';
import { webhookRoutes } from './http/routes/webhooks.js';
import { agentActionRoutes } from './http/routes/agent-actions.js';
import { agentActs } from './mcp/acts.js';
import { settleInterruptedActions } from './agents/settle-interrupted-actions.js';
import { mcpRoutes } from './http/routes/mcp.js';
import { openApiOptions, registerDocsPage } from './http/openapi.js';
import { ErrorBodySchema } from './http/schemas.js';
import { createValidatorCompiler, refuseNulCharacters, treatAbsentBodyAsEmpty } from './http/validation.js';
import { readQueueStats } from './jobs/queue-stats.js';
import { Worker, type WorkerOptions } from './jobs/worker.js';
import { Metrics } from './core/metrics.js';
import type { BlobStore } from './store/blobs/blob-store.js';
import { AnchorSearch } from './pdf/anchor-search.js';
import { PagePreviews } from './pdf/preview/page-previews.js';
import { RevocationFetcher, type LocalRevocation } from './pki/revocation-fetcher.js';
import {
  httpRevocationTransport,
  observedRevocationTransport,
  type RevocationObserver,
} from './pki/revocation-transport.js';
import { sealKeys } from './pki/seal-keys.js';
import { loadPkcs11Library } from './pki/signers/pkcs11.js';
import {
  CallbackRefused,
  checkCallbackUrl,
  guardedAgents,
  type CallbackPolicy,
} from './webhooks/ssrf-guard.js';
import { openBlobStore } from './store/blobs/open-blob-store.js';
import { openRateLimitStore } from './store/rate-limits/open-rate-limit-store.js';
import { RateLimiter } from './rate-limits/rate-limiter.js';
import { DevPkiStore } from './store/dev-pki-store.js';
import { FileStore } from './store/files/file-store.js';
import type { DatabaseHandle } from './store/db/dialect.js';
import { migrateToLatest } from './store/db/migrate.js';
import { openDatabase } from './store/db/open-database.js';
import type { Database } from './store/db/schema.js';
import { bootstrapAdmin, ensureTenant } from './users/bootstrap-admin.js';
import { registerWebhookJobs } from './webhooks/webhook-jobs.js';
import { EmlFileMailer } from './notify/mail/eml-file.js';
import { SmtpMailer } from './notify/mail/smtp.js';
import { registerNotificationJobs } from './jobs/notification-jobs.js';
import { FileSmsSender } from './notify/sms/file.js';
import { HttpSmsSender } from './notify/sms/http.js';
import { withSecurityHeaders } from './http/answers.js';
import { registerSharingJobs } from './sharing/scheduled.js';
import { registerSigningJobs } from './core/signing/seal-on-complete.js';
import { renewDueArchives } from './signing/renew-archives.js';

export const API_PREFIX = '/api/v1';

/**
 * What an interrupted upload left behind, and blobs no file references, are removed after this (longer
 * than any upload takes, or any change between storing its bytes and committing its row).
 */
const TEMPORARY_BLOB_GRACE_MS = 24 * 3_600_000;

/** What an upload cut off by a shutdown is told to wait: a restart, or the proxy's next node. */
const RETRY_AFTER_SHUTDOWN_SECONDS = 5;

export interface App {
  server: FastifyInstance;
  deps: Deps;
  database: DatabaseHandle<Database>;
  blobs: BlobStore;
  /** The job worker (webhook deliveries, schedules); undefined when started without one. */
  worker: Worker | undefined;
  /** The rate limits' counter (tests sync it at a known moment); undefined with RATE_LIMIT=off. */
  rateLimiter: RateLimiter | undefined;
  /** Whether this start created the administrator ADMIN_EMAIL names (the start log says so). */
  adminCreated: boolean;
  /**
   * Stops listening and lets a proxy retire its connections to this node, for at most `maxMs` (see
   * http/drain.ts); `close()` follows. Signals call it; tests that stop an app in-process need not.
   */
  drain(maxMs: number): Promise<void>;
  /** Stops taking requests, lets those in flight finish, then closes the stores. */
  close(): Promise<void>;
}

/**
 * Fetches OCSP answers and CRLs for signing (B-LT, the status before a key signs) and, where allowed,
 * for verification: under the webhooks' SSRF rules unless REVOCATION_ALLOW_PRIVATE says otherwise.
 * `signery verify --online` uses it too. `close` ends its connections.
 */
export function revocationFetcher(
  settings: Config['revocation'],
  options: { observe?: RevocationObserver; local?: () => Promise<LocalRevocation | undefined> } = {},
): { fetcher: RevocationFetcher; close(): void } {
  const policy: CallbackPolicy = { allowPrivate: settings.allowPrivate };
  const agents = guardedAgents(policy);
  const transport = httpRevocationTransport({
    check: (url) =>
      checkCallbackUrl(url, policy).catch((error: unknown) => {
        if (!(error instanceof CallbackRefused)) throw error;
        throw new Error(
          'the address is not public (REVOCATION_ALLOW_PRIVATE=true permits loopback and private ones)',
        );
      }),
    agentFor: (url) => agents.agentFor(url),
  });
  const fetcher = new RevocationFetcher({
    transport: options.observe ? observedRevocationTransport(transport, options.observe) : transport,
    timeoutMs: settings.timeoutMs,
    ...(options.local ? { local: options.local } : {}),
  });
  return { fetcher, close: () => agents.close() };
}

export interface AppOptions {
  clock?: Clock;
  /** pino options, or false for no logs (tests). */
  logger?: boolean | Record<string, unknown>;
  /**
   * Job worker settings (over the configuration's), or false to run none (tests that drive the queue
   * by hand). Unset: as the configuration says (JOB_WORKER).
   */
  worker?: false | WorkerOptions;
}

/**
 * The composition root: opens the stores, applies migrations, creates the bootstrap administrator,
 * and wires every route. Nothing else constructs stores or services.
 */
export async function buildApp(config: Config, options: AppOptions = {}): Promise<App> {
  // An HSM's library (graphene-pk11, optional) loads only when a token is configured, and its absence
  // is said at the start rather than at the first seal.
  if (config.seal.pkcs11Module) {
    await loadPkcs11Library().catch((error: unknown) => {
      throw error instanceof Error && error.name === 'Pkcs11LibraryMissing'
        ? new ConfigError(error.message)
        : error;
    });
  }
  useSecretKey(await loadSecretKey(config));
  const database = await openDatabase(config);
  try {
    await migrateToLatest(database);
  } catch (error) {
    await database.close();
    throw error;
  }
  const blobs = openBlobStore(config);
  let rateLimitStore;
  try {
    rateLimitStore = config.rateLimits.enabled ? await openRateLimitStore(config, database.db) : undefined;
  } catch (error) {
    await blobs.close();
    await database.close();
    throw error;
  }
  // The dev CA opens on first use, which may be inside a transaction: on SQLite, whose one
  // connection that transaction holds, it lives under DATA_DIR/pki (one node per file anyway); on
  // PostgreSQL, where nodes share the installation, in the database.
  const seal = sealKeys(
    config,
    database.dialect.name === 'postgres' ? new DevPkiStore(database.db) : undefined,
  );
  const clock = options.clock ?? systemClock;
  const metrics = new Metrics({ queue: () => readQueueStats(database.db, clock.now()) });
  const revocation = revocationFetcher(config.revocation, {
    observe: metrics.observeRevocation,
    local: async () => (await seal()).devCa,
  });
  const deps: Deps = {
    db: database.db,
    dialect: database.dialect,
    clock,
    config,
    files: new FileStore(database.db, blobs),
    seal,
    anchors: new AnchorSearch(),
    previews: new PagePreviews(),
    metrics,
    revocation: revocation.fetcher,
  };

  await ensureTenant(deps, config.admin.tenant);
  let adminCreated = false;
  if (config.admin.email && config.admin.password) {
    adminCreated = await bootstrapAdmin(deps, {
      tenant: config.admin.tenant,
      name: config.admin.email,
      password: config.admin.password,
    });
  }

  const server = Fastify({
    logger:
      options.logger === false
        ? false
        : {
            level: config.logLevel,
            redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
            hooks: { logMethod: redactLogArguments },
            serializers: {
              err: serializeError,
              req: (req: { method: string; url: string; id: string; ip?: string }) => ({
                id: req.id,
                method: req.method,
                url: redactUrl(req.url),
                remoteAddress: req.ip,
              }),
            },
            ...(typeof options.logger === 'object' ? options.logger : {}),
          },
    trustProxy: config.trustProxy,
    bodyLimit: 10 * 1024 * 1024,
    // x-request-id is honoured only when it is a short safe token (http/request-id.ts).
    requestIdHeader: false,
    genReqId: requestIdOf,
    // One line per request, when it ends (http/request-logging.ts).
    logController: new OneLinePerRequest(),
    // Errors made before routing get the Contract's shape and our words (http/error-handler.ts).
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
  });
  // Set once draining starts: readiness then says no (http/routes/health.ts).
  let draining = false;
  const drainConnections = drainer(server.server);
  const uploads = unfinishedBodies(server);
  const drain = async (maxMs: number): Promise<void> => {
    draining = true;
    // The job worker (made below, once the routes are) claims nothing more from now on; what it runs
    // has the drain's time to finish, then goes back to the queue for other workers (Worker.stop).
    const workerStopped = worker?.stop({ releaseAfterMs: maxMs });
    await drainConnections(maxMs);
    // An upload still arriving would be cut by the exit: it is answered 503 instead (drain.ts).
    uploads.cutOff(() => new ShuttingDown(RETRY_AFTER_SHUTDOWN_SECONDS));
    await workerStopped;
  };
  logAbortedRequests(server);
  server.setValidatorCompiler(createValidatorCompiler());
  refuseNulCharacters(server);
  treatAbsentBodyAsEmpty(server);
  server.addSchema(ErrorBodySchema);
  registerErrorHandlers(server);
  registerJsonParser(server);
  if (config.filesPublicUrl) confineFilesOrigin(server, config.filesPublicUrl);
  await server.register(fastifyCookie);
  await server.register(fastifyMultipart, {
    // Larger buffers than the 16 KiB default let parsing, hashing and the file writes overlap
    // (bench/upload); with the temp file's (FsBlobStore) an upload holds at most about 3 MiB.
    highWaterMark: 1024 * 1024,
    fileHwm: 1024 * 1024,
    limits: MULTIPART_LIMITS,
  });
  await server.register(fastifySwagger, openApiOptions(config));
  server.addHook('onSend', async (request, reply, payload) => {
    // The id the logs, the audit records and the jobs of this request carry: the caller can quote it.
    void reply.header('x-request-id', request.id);
    const location = reply.getHeader('location');
    if (typeof location === 'string') void reply.header('location', withoutCredentials(location));
    withSecurityHeaders(reply);
    return payload;
  });
  // The docs page is public, like the OpenAPI document it shows.
  server.addHook('onRoute', (route) => {
    if (route.url.startsWith(`${API_PREFIX}/docs`)) route.config = { ...route.config, auth: 'none' };
  });
  await registerDocsPage(server, `${API_PREFIX}/docs`);
  registerMetrics(server, deps.metrics.registry);
  const rateLimiter =
    rateLimitStore &&
    new RateLimiter({
      store: rateLimitStore,
      clock: deps.clock,
      windowSeconds: RATE_LIMIT_WINDOW_SECONDS,
      syncMs: config.rateLimits.syncMs,
      logger: server.log,
    });
  registerAuthentication(server, deps, {
    admit: rateLimiter && rateLimitAdmission(rateLimiter, config.rateLimits),
  });
  healthRoutes(server, { database, blobs, draining: () => draining });
  await server.register(
    signerPageRoutes({
      verifyPage: config.publicVerify.enabled,
      linkStanding: (token) => shareLinkStanding(deps, token),
      filesOrigin: config.filesPublicUrl,
      embedOrigins: config.embedAllowedOrigins,
    }),
  );
  if (config.filesPublicUrl) await server.register(fileOriginRoutes(deps));
  if (config.publicVerify.enabled) await server.register(publicVerifyRoutes(deps));
  await server.register(devPkiRoutes(deps));
  await server.register(mcpRoutes(deps));

  await server.register(
    async (api) => {
      api.get('/openapi.json', { config: { auth: 'none' }, schema: { hide: true } }, async () =>
        server.swagger(),
      );
      await api.register(authRoutes(deps));
      await api.register(oidcRoutes(deps));
      await api.register(userRoutes(deps));
      await api.register(settingsRoutes(deps));
      await api.register(fileRoutes(deps));
      await api.register(documentRoutes(deps));
      await api.register(folderRoutes(deps));
      await api.register(templateRoutes(deps));
      await api.register(draftRoutes(deps));
      await api.register(definitionRoutes(deps));
      await api.register(attachmentRoutes(deps));
      await api.register(sharingRoutes(deps));
      await api.register(sharedDocumentRoutes(deps));
      await api.register(shareActionRoutes(deps));
      await api.register(shareUnlockRoutes(deps));
      await api.register(inboxRoutes(deps));
      await api.register(signingRoutes(deps));
      await api.register(twoStepRoutes(deps));
      await api.register(searchRoutes(deps));
      await api.register(auditRoutes(deps));
      await api.register(shareUploadRoutes(deps));
      await api.register(shareOidcRoutes(deps));
      await api.register(stampRoutes(deps));
      await api.register(contactRoutes(deps));
      await api.register(enumRoutes(deps));
      await api.register(webhookRoutes(deps));
      await api.register(agentActionRoutes(deps, agentActs(deps)));
    },
    { prefix: API_PREFIX },
  );

  const runWorker = options.worker === undefined ? config.jobs.worker : options.worker !== false;
  const worker = runWorker
    ? new Worker(deps, {
        logger: server.log,
        metrics: deps.metrics,
        concurrency: config.jobs.concurrency,
        pollIntervalMs: config.jobs.pollIntervalMs,
        wakeUps: database.listenForJobs,
        ...(options.worker || {}),
      })
    : undefined;
  if (worker) {
    registerWebhookJobs(worker, deps);
    registerNotificationJobs(worker, {
      db: deps.db,
      mailer: config.smtpUrl
        ? new SmtpMailer({ url: config.smtpUrl, from: config.mailFrom })
        : new EmlFileMailer({ dir: join(config.dataDir, 'mail'), from: config.mailFrom }),
      sms: config.smsHttpUrl
        ? new HttpSmsSender({ url: config.smsHttpUrl, token: config.smsHttpToken })
        : new FileSmsSender({ dir: join(config.dataDir, 'sms') }),
      readAttachment: async ({ tenantId, fileId }) => {
        const file = await deps.files.find(tenantId, fileId);
        return file ? deps.files.read(file) : undefined;
      },
    });
    registerSharingJobs(worker, deps);
    registerSigningJobs(worker, deps);
    worker.every('documents.renewArchives', 3_600_000, async () => {
      const { failed } = await renewDueArchives(deps);
      // The documents renewed stay renewed; the tick is retried for the others (with backoff, within its hour).
      if (failed.length > 0) {
        throw new Error(
          `Archive renewal failed for ${failed.length} document(s): ${failed
            .map((f) => `${f.documentId}: ${f.message}`)
            .join('; ')}`,
        );
      }
    });
    worker.every('agents.settleInterrupted', 300_000, async () => {
      await settleInterruptedActions(deps, deps.clock.now());
    });
    worker.every('search.sweepScrolls', 300_000, async () => {
      await sweepScrollContexts(deps);
    });
    worker.every('blobs.sweepTemporary', 3_600_000, async (tick) => {
      await blobs.sweepTemporary(new Date(tick.getTime() - TEMPORARY_BLOB_GRACE_MS));
    });
    worker.register(BYTES_REMOVAL_JOB, async (job) => {
      await removeBytes(deps, job.payload as unknown as BytesRemovalPayload);
    });
    worker.every('blobs.sweepUnreferenced', 86_400_000, async (tick) => {
      await deps.files.sweepUnreferenced(new Date(tick.getTime() - TEMPORARY_BLOB_GRACE_MS));
    });
    worker.start();
  }

  let closed = false;
  return {
    server,
    deps,
    database,
    blobs,
    worker,
    rateLimiter,
    adminCreated,
    drain,
    async close() {
      if (closed) return;
      closed = true;
      // Fastify closes the connections idle when closing starts; one whose response was still being
      // written then turns idle later and would hold the close for the keep-alive timeout (72 s). Keep
      // closing idle connections until the server has closed: in-flight requests still finish.
      const sweeper = setInterval(() => server.server.closeIdleConnections(), 50);
      try {
        await server.close();
      } finally {
        clearInterval(sweeper);
      }
      await worker?.stop();
      // Its last counts go to the store before the database closes, so the other nodes keep them.
      await rateLimiter?.close();
      await rateLimitStore?.close();
      await seal.close();
      revocation.close();
      await deps.anchors.close();
      await deps.previews.close();
      await blobs.close();
      await database.close();
    },
  };
}

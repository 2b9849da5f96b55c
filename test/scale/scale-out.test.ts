import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it, type TestContext } from 'node:test';
import { pem } from '../../src/pki/dev-ca.js';
import type { DatabaseHandle } from '../../src/store/db/dialect.js';
import { openPostgres } from '../../src/store/db/postgres/postgres-database.js';
import type { Database } from '../../src/store/db/schema.js';
import { createTestPki, rsaToken } from '../fixtures/test-pki.js';
import { freePort } from '../helpers/free-port.js';
import { makePdf } from '../helpers/pdf.js';
import { startS3rver, type RunningS3 } from '../helpers/s3rver.js';
import { ADMIN, callApi, TEST_DATABASE_URL } from '../helpers/server.js';
import { hasTool, pdfsig, workspace, type Workspace } from '../pdf/oracles.js';
import {
  deliveryIdOf,
  inFlightAtCrash,
  startReceiver,
  timesReceived,
  waitFor,
  type Receiver,
} from '../webhooks/helpers.js';
import {
  createTenantWebhook,
  logIn,
  runScript,
  serverEnv,
  spawnServer,
  spawnWorkerNode,
  tearDownNodes,
  type ServerProcess,
} from '../webhooks/processes.js';
import { NGINX_BINARY, startNginx, type Nginx } from './nginx.js';
import { Traffic, type Outcome } from './traffic.js';

/** Integrators sending requests at once through nginx. */
const CLIENTS = 4;
/** Tenant webhooks, each receiving every event. */
const WEBHOOKS = 3;
/** Events emitted at once before the worker node is killed, so that it dies delivering a backlog. */
const BACKLOG = 150;

/** POSTs of the traffic that deploy/nginx.conf lets nginx send again to another node. */
const SAFE_TO_REPEAT = ['/login', '/search/reports'];

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.08 });

type ApiNode = 'a' | 'b';

describe(
  'scale-out (issue: Operations): nginx from deploy/nginx.conf in front of two API nodes and a `signery worker`, on PostgreSQL and S3',
  {
    skip: !TEST_DATABASE_URL
      ? 'runs in the PostgreSQL pass of the suite (TEST_DATABASE_URL): several nodes share one PostgreSQL'
      : !NGINX_BINARY
        ? 'nginx is not installed (.ci/run installs Debian’s package)'
        : !hasTool('pdfsig')
          ? 'pdfsig is not installed (.ci/run installs poppler-utils)'
          : false,
  },
  () => {
    const databaseUrl = TEST_DATABASE_URL ?? '';
    const schema = `t_scale_${randomBytes(4).toString('hex')}`;
    const ports: Record<ApiNode | 'nginx', number> = { a: 0, b: 0, nginx: 0 };
    const dataDirs: string[] = [];
    const spawned: ServerProcess[] = [];
    const nodes: Partial<Record<ApiNode | 'worker', ServerProcess>> = {};
    let s3: RunningS3;
    let receiver: Receiver;
    let nginx: Nginx;
    let database: DatabaseHandle<Database>;
    let space: Workspace;
    let token: string;
    let traffic: Traffic | undefined;

    /** Each node's environment: one database schema, one bucket, nginx's address as PUBLIC_URL. */
    const env = (extra: Record<string, string>) =>
      serverEnv({
        DATABASE_URL: databaseUrl,
        DATABASE_SCHEMA: schema,
        ...s3.env,
        PUBLIC_URL: `http://127.0.0.1:${ports.nginx}`,
        TRUST_PROXY: 'true',
        // The default: longer than deploy/nginx.conf's keepalive_timeout (4 s).
        SHUTDOWN_DRAIN_SECONDS: '10',
        ...extra,
      });
    const startApiNode = async (name: ApiNode) => {
      const dataDir = await mkdtemp(join(tmpdir(), `signery-scale-${name}-`));
      dataDirs.push(dataDir);
      const node = await spawnServer(
        env({ DATA_DIR: dataDir, PORT: String(ports[name]), JOB_WORKER: 'false' }),
      );
      spawned.push(node);
      nodes[name] = node;
      return node;
    };
    const startWorker = async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'signery-scale-worker-'));
      dataDirs.push(dataDir);
      const node = await spawnWorkerNode(env({ DATA_DIR: dataDir }));
      spawned.push(node);
      nodes.worker = node;
      return node;
    };
    const node = (name: ApiNode) => `http://127.0.0.1:${ports[name]}`;
    const upstream = (name: ApiNode) => `127.0.0.1:${ports[name]}`;
    /** Resolves once nginx has had a request answered by the node since `lines` lines of its log. */
    const servesAgain = (name: ApiNode, lines: number) =>
      waitFor(
        async () =>
          (await nginx.accessLog())
            .slice(lines)
            .some((line) => line.upstreams.at(-1) === upstream(name) && line.status < 500),
        20_000,
        `nginx sending requests to node ${name} again`,
      );
    const download = async (base: string, fileId: string) => {
      const response = await fetch(`${base}/api/v1/files/loadFile/hash/${fileId}?token=${token}`);
      assert.equal(response.status, 200);
      return Buffer.from(await response.arrayBuffer());
    };
    const assertValidlySigned = async (bytes: Buffer, name: string) => {
      const verdicts = await pdfsig(await space.write(`${name}.pdf`, bytes));
      assert.ok(verdicts.length >= 1, `${name}: pdfsig finds a signature`);
      for (const verdict of verdicts) assert.equal(verdict.validation, 'Signature is Valid.', verdict.raw);
    };

    before(async () => {
      for (const name of ['a', 'b', 'nginx'] as const) ports[name] = await freePort();
      s3 = await startS3rver('signery-scale');
      receiver = await startReceiver();
      space = await workspace();
      // Started together, as an operator's nodes may be: one migrates the schema (the others wait for its
      // lock) and the development PKI, kept in the database, is made once for all.
      await Promise.all([startApiNode('a'), startApiNode('b'), startWorker()]);
      nginx = await startNginx({ upstreams: [upstream('a'), upstream('b')], port: ports.nginx });
      database = await openPostgres({ url: databaseUrl, schema });
      token = await logIn(nginx.url);
      for (let i = 0; i < WEBHOOKS; i++)
        await createTenantWebhook(nginx.url, token, `${receiver.url}?w=${i}`);
    });
    after(async () => {
      await traffic?.stop();
      await nginx?.stop();
      await space?.remove();
      await tearDownNodes({
        nodes: spawned,
        closers: [database, receiver, s3],
        dataDirs,
        databaseUrl,
        schema,
      });
    });

    it('cross-node flows: a token from one node works on the other; upload, create, sign and download on alternate nodes; two-step started on one node is finished on the other; report and audit-log scrolls alternate', async () => {
      const a = node('a');
      const b = node('b');
      const session = await callApi(a, 'POST', '/login', {
        body: { name: ADMIN.name, password: ADMIN.password },
      });
      assert.equal(session.status, 200, session.text);
      const onB = await callApi(b, 'GET', '/login', { token: session.body.token });
      assert.equal(onB.body.logged, true, 'the session made on node a is known on node b');
      const mine = session.body.token as string;
      const adminId = onB.body.user.id as string;

      // Upload on a, create on b, sign on a, download on b.
      const form = (title: string) => ({
        form: { file: { name: `${title}.pdf`, type: 'application/pdf', bytes: makePdf({ lines: [title] }) } },
      });
      const createdFrom = async (title: string, uploadOn: string, createOn: string) => {
        const uploaded = await callApi(uploadOn, 'POST', '/files/saveFile', { token: mine, ...form(title) });
        assert.equal(uploaded.status, 200, uploaded.text);
        const created = await callApi(createOn, 'POST', '/documents', {
          token: mine,
          body: { body: { documentTitle: title, pdfFile: { content: uploaded.body.file.id } } },
        });
        assert.equal(created.status, 200, created.text);
        return created.body.results[0].documentId as string;
      };
      const signedHere = await createdFrom('Cross-node', a, b);
      const signed = await callApi(a, 'PUT', '/documents/sign/1', {
        token: mine,
        body: { id: signedHere, signatures: [{ type: 'signature', pages: [1], position: at(0.1, 0.8) }] },
      });
      assert.equal(signed.status, 200, signed.text);
      const read = await callApi(b, 'GET', `/documents/${signedHere}`, { token: mine });
      assert.equal(read.body.results[0]._version, 2);
      await assertValidlySigned(await download(b, read.body.results[0].pdfFile.content), 'cross-node');

      // Two-step: the certificate uploaded on b, the session started on a and finished on b.
      const pki = await createTestPki();
      const key = await pki.signer({ name: 'Scale Out Signer', key: 'RSA' });
      const certificate = new FormData();
      certificate.append(
        'file',
        new Blob([[key.certificate, ...key.chain].map((der) => pem('CERTIFICATE', der)).join('')]),
        'certificate.pem',
      );
      const added = await fetch(`${b}/api/v1/users/${adminId}/certificate?token=${mine}`, {
        method: 'POST',
        body: certificate,
      });
      assert.equal(added.status, 200, await added.text());
      const twoStep = await createdFrom('Two-step across nodes', b, a);
      const started = await callApi(a, 'POST', '/documents/sign/1/start/digest', {
        token: mine,
        body: {
          id: twoStep,
          certificateHash: createHash('sha256').update(key.certificate).digest('hex'),
          signatureProvider: 'internalUsb',
          signatures: [{ type: 'signature', pages: [1], position: at(0.1, 0.8) }],
        },
      });
      assert.equal(started.status, 200, started.text);
      const { files, sessionId } = started.body;
      const finished = await callApi(b, 'PUT', '/documents/sign/finish/digest', {
        token: mine,
        body: {
          sessionId,
          signedDigests: [
            {
              originalDigest: files[0].digest,
              signedDigest: rsaToken(
                key.privateKey,
                'SHA-256',
              )(Buffer.from(files[0].digest, 'base64')).toString('base64'),
            },
          ],
        },
      });
      assert.equal(finished.status, 200, finished.text);
      const twoStepRead = await callApi(a, 'GET', `/documents/${twoStep}`, { token: mine });
      await assertValidlySigned(await download(a, twoStepRead.body.results[0].pdfFile.content), 'two-step');

      // Scrolls: each page asked of the other node than the page before.
      for (let i = 0; i < 3; i++) await createdFrom(`Report row ${i}`, a, b);
      const scrollReports = async () => {
        const seen: string[] = [];
        let scroll: { timeout: number; id?: string } = { timeout: 60 };
        for (let page = 0; ; page++) {
          const response = await callApi(page % 2 === 0 ? a : b, 'POST', '/search/reports', {
            token: mine,
            body: { query: { size: 2, scroll } },
          });
          assert.equal(response.status, 200, response.text);
          if (response.body.results.length === 0) return { seen, total: response.body.total as number };
          seen.push(...response.body.results.map((r: { documentId: string }) => r.documentId));
          scroll = { timeout: 60, id: response.body.scrollId };
        }
      };
      const reports = await scrollReports();
      assert.equal(reports.total, 5);
      assert.equal(new Set(reports.seen).size, 5, 'every document once, pages from both nodes');
      const logs: string[] = [];
      let logScroll: string | undefined;
      let total = 0;
      for (let page = 0; page < 50; page++) {
        const response = await callApi(page % 2 === 0 ? b : a, 'POST', '/logs/search', {
          token: mine,
          body: { logsQuery: { size: 4 }, scroll: { timeout: 60, ...(logScroll ? { id: logScroll } : {}) } },
        });
        assert.equal(response.status, 200, response.text);
        total = response.body.total;
        if (response.body.results.length === 0) break;
        logs.push(...response.body.results.map((r: { id: string }) => r.id));
        logScroll = response.body.scrollId;
      }
      assert.ok(total > 8, 'several pages of audit records');
      assert.equal(logs.length, total);
      assert.equal(new Set(logs).size, total, 'every audit record once');
    });

    it('mid-traffic through nginx: an API node killed (SIGKILL) and the worker node killed mid-backlog; then a rolling restart (SIGTERM, one node at a time) drops no request; every acknowledged change is there, every signed file valid, every event delivered, the audit chain intact', async (t) => {
      traffic = new Traffic(nginx.url, token, CLIENTS);
      await traffic.rounds(2 * CLIENTS);

      // SIGKILL node a while requests are in flight on it, and bring it back on its port.
      const killSent = performance.now();
      await nodes.a!.stop('SIGKILL');
      const killDone = performance.now();
      await traffic.rounds(2 * CLIENTS);
      await startApiNode('a');
      await servesAgain('a', (await nginx.accessLog()).length);

      // SIGKILL the worker node while it delivers a backlog, then start another.
      await runScript('test/webhooks/emit-events.ts', [String(BACKLOG), 'backlog'], env({}));
      await waitFor(
        () => receiver.received.filter((r) => r.json.documentId.startsWith('backlog-')).length >= BACKLOG,
        30_000,
        'the backlog under way',
      );
      await nodes.worker!.stop('SIGKILL');
      const inFlight = await inFlightAtCrash(database.db, receiver);
      const backlogAtCrash = receiver.received.filter((r) => r.json.documentId.startsWith('backlog-')).length;
      await startWorker();
      await traffic.rounds(CLIENTS);

      // Rolling restart: each API node in turn, then the worker node, with SIGTERM.
      const rollingFrom = performance.now();
      for (const name of ['a', 'b'] as const) {
        await nodes[name]!.stop('SIGTERM');
        await startApiNode(name);
        // Lines logged from now on: a request the node finished while it stopped is logged late.
        await servesAgain(name, (await nginx.accessLog()).length);
      }
      await nodes.worker!.stop('SIGTERM');
      await startWorker();
      await traffic.rounds(CLIENTS);
      const rollingTo = performance.now();
      await traffic.stop();

      // What happened, gathered first so that CI's log shows the figures whatever the verdict.
      const failures = traffic.failures();
      const uploads = await database.db
        .selectFrom('files')
        .select('id')
        .where('id', 'in', traffic.uploads)
        .execute();
      const documents = await database.db
        .selectFrom('documents')
        .select(['id', 'version', 'is_signed', 'main_file_id'])
        .where('id', 'in', [...traffic.documents.keys()])
        .execute();
      const signedRows = documents.filter((row) => Number(row.is_signed) === 1);
      let invalid = 0;
      for (const row of signedRows) {
        const verdicts = await pdfsig(
          await space.write(`${row.id}.pdf`, await download(nginx.url, row.main_file_id!)),
        );
        if (verdicts.length === 0 || verdicts.some((v) => v.validation !== 'Signature is Valid.'))
          invalid += 1;
      }
      const events = await database.db.selectFrom('events').select('id').execute();
      const deliveries = await database.db
        .selectFrom('webhook_deliveries')
        .select(['id', 'webhook_id'])
        .execute();
      const undelivered = () => {
        const received = new Set(receiver.received.map(deliveryIdOf));
        return deliveries.filter((delivery) => !received.has(delivery.id));
      };
      await waitFor(() => undelivered().length === 0, 60_000, 'every delivery at the receiver').catch(
        () => undefined,
      );
      const twice = [...timesReceived(receiver)].filter(([, count]) => count > 1).map(([id]) => id);
      const webhookOf = new Map(deliveries.map((d) => [d.id, d.webhook_id]));
      const perWebhook = (ids: Iterable<string>) => {
        const counts = new Map([...new Set(webhookOf.values())].map((id) => [id, 0]));
        for (const id of ids) counts.set(webhookOf.get(id)!, (counts.get(webhookOf.get(id)!) ?? 0) + 1);
        return [...counts.values()];
      };
      const audit = await runScript('src/cli.ts', ['audit', 'verify'], env({})).catch(
        (error: Error) => error.message,
      );
      report(t, {
        access: await nginx.accessLog(),
        nodes: { a: upstream('a'), b: upstream('b') },
        traffic,
        failures,
        documents: documents.length,
        signed: signedRows.length,
        invalid,
        deliveries: deliveries.length,
        inFlight: perWebhook(inFlight),
        twice: perWebhook(twice),
        audit: audit.trim(),
      });

      // The rolling restart dropped nothing; the kill, only requests in flight on the killed node.
      const duringRolling = failures.filter((f) => f.endedAt >= rollingFrom && f.startedAt <= rollingTo);
      assert.deepEqual(duringRolling.map(describeOutcome), [], 'the rolling restart dropped no request');
      const atTheKill = (f: Outcome) => f.startedAt <= killDone && f.endedAt >= killSent;
      assert.deepEqual(
        failures.filter((f) => !atTheKill(f)).map(describeOutcome),
        [],
        'the only failures are of requests in flight when node a was killed',
      );
      assert.ok(failures.length <= CLIENTS, 'at most one request per client was in flight');
      for (const failure of failures) {
        // nginx sends a GET or PUT again to the other node, and the POSTs deploy/nginx.conf names safe to
        // repeat (logins, searches); another POST once sent is not repeated (502), and a PUT the killed node
        // had committed, sent again, meets the new version (409).
        assert.ok(
          (failure.method === 'POST' && failure.status === 502 && !SAFE_TO_REPEAT.includes(failure.path)) ||
            (failure.method === 'PUT' && failure.status === 409),
          describeOutcome(failure),
        );
      }
      assert.deepEqual(
        traffic.staleReads,
        [],
        'a read on either node shows every change acknowledged before it',
      );

      // Every acknowledged change is in the database, and every signed file is valid.
      assert.equal(uploads.length, traffic.uploads.length, 'every acknowledged upload');
      assert.equal(documents.length, traffic.documents.size, 'every acknowledged document');
      for (const row of documents) {
        assert.ok(
          Number(row.version) >= traffic.documents.get(row.id)!,
          `${row.id}: its acknowledged version`,
        );
        if (traffic.signed.has(row.id)) assert.equal(Number(row.is_signed), 1, `${row.id}: signed`);
      }
      assert.equal(invalid, 0, 'every signed file valid in pdfsig');

      // Every event went to every webhook; a delivery arrived twice only if it was in flight at the crash.
      assert.ok(backlogAtCrash < WEBHOOKS * BACKLOG, 'the worker was killed in the middle of the backlog');
      assert.equal(deliveries.length, events.length * WEBHOOKS, 'each event has a delivery per webhook');
      assert.deepEqual(undelivered(), [], 'every delivery at the receiver');
      assert.deepEqual(
        twice.filter((id) => !inFlight.has(id)),
        [],
        'no delivery recorded before the crash was sent again',
      );

      // The audit chain is intact.
      assert.match(audit, /^OK: /m);
    });
  },
);

function describeOutcome(outcome: Outcome): string {
  return `${outcome.method} ${outcome.path} → ${outcome.status}`;
}

/** The figures CI's log shows (t.diagnostic). */
function report(
  t: TestContext,
  figures: {
    access: Awaited<ReturnType<Nginx['accessLog']>>;
    nodes: Record<ApiNode, string>;
    traffic: Traffic;
    failures: Outcome[];
    documents: number;
    signed: number;
    invalid: number;
    deliveries: number;
    inFlight: number[];
    twice: number[];
    audit: string;
  },
): void {
  const answeredBy = (address: string) =>
    figures.access.filter((line) => line.upstreams.at(-1) === address).length;
  const retried = figures.access.filter((line) => line.upstreams.length > 1).length;
  const { traffic } = figures;
  t.diagnostic(
    `requests through nginx: ${figures.access.length} (node a ${answeredBy(figures.nodes.a)}, node b ${answeredBy(figures.nodes.b)}; ${retried} sent again to the other node)`,
  );
  t.diagnostic(
    `client requests: ${traffic.outcomes.length}, failed: ${figures.failures.length} (${figures.failures.map(describeOutcome).join(', ') || 'none'})`,
  );
  t.diagnostic(
    `acknowledged: ${traffic.uploads.length} uploads, ${traffic.documents.size} documents, ${traffic.signed.size} signatures; present: ${figures.documents} documents, ${figures.signed} signed; invalid in pdfsig: ${figures.invalid}`,
  );
  t.diagnostic(
    `webhook deliveries: ${figures.deliveries}; in flight at the worker's SIGKILL per webhook: [${figures.inFlight.join(', ')}]; delivered twice per webhook: [${figures.twice.join(', ')}]`,
  );
  t.diagnostic(`audit: ${figures.audit}`);
}

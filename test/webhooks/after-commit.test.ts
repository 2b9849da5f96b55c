import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { JOBS_CHANNEL, THIS_PROCESS } from '../../src/jobs/doorbell.js';
import { makePdf } from '../helpers/pdf.js';
import { startServer, TEST_DATABASE_URL, upload, type TestServer } from '../helpers/server.js';
import { startReceiver, waitFor, type Receiver } from './helpers.js';

// PostgreSQL only: the NOTIFY that wakes other nodes' workers. The SQLite run reports it as skipped.
const skip = TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (runs in the PostgreSQL pass of CI)';

describe(
  'document changes wake other nodes after their commit (one NOTIFY from this process)',
  { skip },
  () => {
    let server: TestServer;
    let receiver: Receiver;
    let raw: pg.Client;
    const heard: string[] = [];

    before(async () => {
      receiver = await startReceiver();
      server = await startServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
      // A plain connection on the server's channel: it hears every NOTIFY with its payload.
      raw = new pg.Client({
        connectionString: TEST_DATABASE_URL,
        options: `-c search_path="${server.schema}"`,
      });
      await raw.connect();
      raw.on('notification', (message) => heard.push(message.payload ?? ''));
      const { rows } = await raw.query<{ channel: string }>(`select ${JOBS_CHANNEL} as channel`);
      await raw.query(`listen "${rows[0]!.channel}"`);
    });
    after(async () => {
      await raw.end();
      await server.close();
      await receiver.close();
    });

    it('creating a document through the API: its event is delivered, woken by a NOTIFY sent after the commit', async () => {
      const token = await server.adminToken();
      const hook = await server.api('POST', '/webhooks', {
        token,
        body: { type: 'tenant', callbackUrl: receiver.url },
      });
      assert.equal(hook.status, 200, hook.text);
      const content = await upload(server, token, makePdf());
      heard.splice(0);
      const created = await server.api('POST', '/documents', {
        token,
        body: { body: { documentTitle: 'Woken', pdfFile: { content } } },
      });
      assert.equal(created.status, 200, created.text);
      await waitFor(() => receiver.received.some((r) => r.json.event === 'documentCreated'), 10_000);
      await waitFor(() => heard.length > 0, 10_000);
      // A NOTIFY sent inside the transaction would carry an empty payload.
      assert.ok(
        heard.every((payload) => payload === THIS_PROCESS),
        `payloads: ${JSON.stringify(heard)}`,
      );
    });
  },
);

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { THIS_PROCESS } from '../../src/store/db/postgres/job-channel.js';
import { listenToJobChannel, type ChannelListener } from '../helpers/notifications.js';
import { makePdf } from '../helpers/pdf.js';
import { TEST_DATABASE_URL, upload } from '../helpers/server.js';
import { useServer } from '../helpers/use-server.js';
import { startReceiver, waitFor, type Receiver } from './helpers.js';

// PostgreSQL only: the NOTIFY that wakes other nodes' workers. The SQLite run reports it as skipped.
const skip = TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (runs in the PostgreSQL pass of CI)';

describe(
  'document changes wake other nodes after their commit (one NOTIFY from this process)',
  { skip },
  () => {
    const server = useServer({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    let receiver: Receiver;
    let listener: ChannelListener;

    before(async () => {
      receiver = await startReceiver();
      listener = await listenToJobChannel(TEST_DATABASE_URL ?? '', server.schema ?? '');
    });
    after(async () => {
      await listener.close();
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
      listener.heard.splice(0);
      const created = await server.api('POST', '/documents', {
        token,
        body: { body: { documentTitle: 'Woken', pdfFile: { content } } },
      });
      assert.equal(created.status, 200, created.text);
      await waitFor(() => receiver.received.some((r) => r.json.event === 'documentCreated'), 10_000);
      await waitFor(() => listener.heard.length > 0, 10_000);
      // A NOTIFY sent inside the transaction would carry an empty payload.
      assert.ok(
        listener.heard.every((payload) => payload === THIS_PROCESS),
        `payloads: ${JSON.stringify(listener.heard)}`,
      );
    });
  },
);

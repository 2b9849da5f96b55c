import assert from 'node:assert/strict';
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/base/clock.js';
import { useServer } from '../helpers/use-server.js';
import { waitFor } from '../webhooks/helpers.js';

describe('Storage: what interrupted uploads leave behind is swept (Operations)', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({ clock, worker: { pollIntervalMs: 50 } });

  it('a temp file older than a day goes at the next hourly sweep; one being written stays', async () => {
    const tmp = join(server.dataDir, 'blobs', 'tmp');
    await mkdir(tmp, { recursive: true });
    const stale = join(tmp, 'crashed-two-days-ago');
    await writeFile(stale, 'half an upload');
    const twoDaysAgo = new Date(Date.now() - 2 * 86_400_000);
    await utimes(stale, twoDaysAgo, twoDaysAgo);
    await writeFile(join(tmp, 'being-written'), 'an upload in progress');

    clock.advance(3_600_000);
    server.app.worker?.wake();
    await waitFor(async () => !(await readdir(tmp)).includes('crashed-two-days-ago'), 10_000, 'the sweep');
    assert.deepEqual(await readdir(tmp), ['being-written']);
  });
});

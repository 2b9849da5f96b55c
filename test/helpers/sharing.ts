import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PREVIEW_AHEAD_JOB } from '../../src/core/sharing/preview-ahead.js';
import { readJson } from '../../src/store/db/json.js';
import type { Json } from '../../src/store/db/schema.js';
import { aDocument, type DocumentSpec } from './documents.js';
import { mustSucceed, type ApiResponse, type TestServer } from './server.js';
import { shareTokenOf, type TestSmtp } from './smtp.js';

/**
 * Scenario builders for sharing, through the real API: a shared document, an external recipient's
 * share with the link token from the invitation mail, and a recipient's signature by link.
 */

export interface ShareSpec extends DocumentSpec {
  /** The recipients (POST /share's `data`); an address or user name alone is one signer. */
  to: string | Record<string, unknown>[];
  /** More of POST /share's body (sequential, signatureFields, signEntities, …). */
  share?: Record<string, unknown>;
}

export interface SharedDocument {
  id: string;
  /** POST /share's answer: the Share objects. */
  // Tests read arbitrary fields of the shares.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  shares: any[];
}

/** A document of `token`'s owner shared with recipients (POST /share). */
export async function aSharedDocument(
  server: TestServer,
  token: string,
  spec: ShareSpec,
): Promise<SharedDocument> {
  const id = await aDocument(server, token, spec);
  return { id, shares: await shareDocument(server, token, id, spec) };
}

/** POST /share of document `id`, which must succeed: the Share objects. */
export async function shareDocument(
  server: TestServer,
  token: string,
  id: string,
  spec: Pick<ShareSpec, 'to' | 'share'>,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
): Promise<any[]> {
  const data = typeof spec.to === 'string' ? [{ sharePurpose: 'sign', shareTo: spec.to }] : spec.to;
  const shared = await server.api('POST', '/share', { token, body: { id, data, ...spec.share } });
  return mustSucceed(shared, 'POST /share').body;
}

/**
 * A document shared with one recipient by e-mail address, and that recipient's link token, read from
 * the invitation the server mailed (the first mail to `email` matching `mail`).
 */
export async function anExternalShare(
  server: TestServer & { smtp: TestSmtp },
  token: string,
  spec: DocumentSpec & {
    email: string;
    /** More of the recipient (password, phone, allowedOAuths, rights, …). */
    recipient?: Record<string, unknown>;
    share?: Record<string, unknown>;
    mail?: RegExp;
  },
): Promise<SharedDocument & { link: string }> {
  const to = [{ sharePurpose: 'sign', shareTo: spec.email, ...spec.recipient }];
  const shared = await aSharedDocument(server, token, { ...spec, to });
  return { ...shared, link: await linkOf(server.smtp, spec.email, spec.mail) };
}

/** The share link token of the first invitation to `email` matching `mail`. */
export async function linkOf(smtp: TestSmtp, email: string, mail = /\/s\/shr_/): Promise<string> {
  return shareTokenOf(await smtp.waitFor(email, mail));
}

/** PUT /share/document/sign at the version the link shows, as the link's recipient. */
export async function signByLink(
  server: TestServer,
  link: string,
  id: string,
  signatures: Record<string, unknown>[],
): Promise<ApiResponse> {
  const shown = await server.api('GET', '/share/document', { token: link });
  return server.api('PUT', `/share/document/sign/${shown.body.results[0]._version}`, {
    token: link,
    body: { id, signatures },
  });
}

/**
 * The text of the first SMS the server wrote to `phone` (the file SMS sender of the test server, under
 * DATA_DIR/sms) that `matches`, waiting up to five seconds for it; undefined when none came.
 */
export async function smsTextTo(
  server: TestServer,
  phone: string,
  matches: (text: string) => boolean = () => true,
): Promise<string | undefined> {
  const dir = join(server.dataDir, 'sms');
  for (let i = 0; i < 100; i++) {
    const files = await readdir(dir).catch(() => []);
    for (const file of files.filter((f) => f.endsWith('.json'))) {
      const sms = JSON.parse(await readFile(join(dir, file), 'utf8')) as { to: string; text: string };
      if (sms.to === phone && matches(sms.text)) return sms.text;
    }
    await sleep(50);
  }
  return undefined;
}

/** The six-digit code of the SMS the server wrote to `phone`, waiting up to five seconds for it. */
export async function smsCodeTo(server: TestServer, phone: string): Promise<string | undefined> {
  const text = await smsTextTo(server, phone, (t) => /\d{6}/.test(t));
  return text === undefined ? undefined : /(\d{6})/.exec(text)?.[1];
}

/**
 * The job that draws a document's first page ahead of its recipients (core/sharing/preview-ahead.ts),
 * once it has ended or after ten seconds: its status and error, or undefined when none was queued.
 */
export async function previewAheadJob(
  server: TestServer,
  documentId: string,
): Promise<{ status: string; last_error: string | null } | undefined> {
  const db = server.app.deps.db;
  const { main_file_id: fileId } = await db
    .selectFrom('documents')
    .select('main_file_id')
    .where('id', '=', documentId)
    .executeTakeFirstOrThrow();
  let job: { status: string; last_error: string | null; payload: Json } | undefined;
  for (let tries = 0; tries < 100; tries++) {
    const jobs = await db
      .selectFrom('jobs')
      .select(['status', 'payload', 'last_error'])
      .where('type', '=', PREVIEW_AHEAD_JOB)
      .execute();
    job = jobs.find((j) => readJson<{ fileId?: string }>(j.payload, {}).fileId === fileId);
    if (job && job.status !== 'queued' && job.status !== 'running') break;
    await sleep(100);
  }
  return job && { status: job.status, last_error: job.last_error };
}

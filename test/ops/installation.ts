import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { verifyAuditChain } from '../../src/audit/verify-chain.js';
import { RIGHTS } from '../../src/core/access/roles.js';
import { hasTool, pdfsig, type Workspace } from '../pdf/oracles.js';
import { makePdf, PNG_1PX } from '../helpers/pdf.js';
import { createUser, upload, type TestServer } from '../helpers/server.js';

/**
 * An installation as people use one, built through the HTTP API, and the check that another server
 * shows the same installation: what `signery migrate-store` and `signery restore` must carry whole.
 */

export const PASSWORD = 'user-password-1';
const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.08 });

export interface ExpectedDocument {
  id: string;
  title: string;
  version: number;
  /** SHA-256 of each of its files' bytes (main file and attachments), by file id. */
  files: Record<string, string>;
  mainFile: string;
  signatures: number;
  /** Signed or sealed: its signatures must verify as trusted (the dev CA carried over). */
  signed: boolean;
}

export interface Installation {
  documents: ExpectedDocument[];
  /** Audit records when it was built. */
  auditRecords: number;
}

/**
 * Users (an owner with every right, a signer), a webhook whose deliveries fail and are retried (jobs,
 * deliveries, attempts), a contact, and documents: one with an attachment, one the owner signed, one
 * sealed, one shared to the signer who signed it (completed, sealed on completion), one shared to an
 * external recipient with a password (pending). Every change wrote its audit record. `server` must be
 * started with WEBHOOK_ALLOW_PRIVATE=true.
 */
export async function anInstallation(server: TestServer): Promise<Installation> {
  await createUser(server, { name: 'owner', email: 'owner@example.test', rights: [...RIGHTS] });
  await createUser(server, { name: 'ivy', email: 'ivy@example.test' });
  const owner = await server.login('owner', PASSWORD);
  const call = async (method: string, path: string, body?: unknown, token = owner) => {
    const response = await server.api(method, path, { token, body });
    assert.ok(response.status < 300, `${method} ${path}: ${response.status} ${response.text}`);
    return response.body;
  };
  // Port 9 (discard) refuses the connection: every delivery fails and waits for its retry.
  await call('POST', '/webhooks', { type: 'organization', callbackUrl: 'http://127.0.0.1:9/hook' });
  await call('POST', '/contacts', { name: 'A contact', email: 'contact@example.org' });
  const image = await upload(server, owner, PNG_1PX, {
    path: '/files/signature',
    name: 's.png',
    type: 'image/png',
  });

  const newDocument = async (title: string, attachment = false) => {
    const content = await upload(server, owner, makePdf({ pages: 2, lines: [title] }));
    const file = attachment ? [{ content: await upload(server, owner, makePdf({ lines: ['Annex'] })) }] : [];
    const created = await call('POST', '/documents', {
      body: { documentTitle: title, pdfFile: { content }, file },
    });
    return created.results[0].documentId as string;
  };
  await newDocument('With an attachment', true);
  const signed = await newDocument('Signed by its owner');
  await call('PUT', '/documents/sign/1', {
    id: signed,
    signatures: [{ type: 'signature', blob: image, pages: [1], position: at(0.1, 0.8) }],
  });
  const sealed = await newDocument('Sealed');
  await call('PUT', '/documents/seal/1', { id: sealed, certificate: true });
  const completed = await newDocument('Signed by Ivy');
  await call('POST', '/share', { id: completed, data: [{ sharePurpose: 'sign', shareTo: 'ivy' }] });
  const ivy = await server.login('ivy', PASSWORD);
  const version = (await call('GET', `/documents/${completed}`)).results[0]._version as number;
  await call(
    'PUT',
    `/documents/sign/${version}`,
    { id: completed, signatures: [{ type: 'signature', position: at(0.5, 0.8) }] },
    ivy,
  );
  const pending = await newDocument('Waiting for an external signer');
  await call('POST', '/share', {
    id: pending,
    data: [{ sharePurpose: 'sign', shareTo: 'ext@example.org', password: 'ext-password-1' }],
  });

  const documents: ExpectedDocument[] = [];
  for (const id of await documentIds(server)) documents.push(await describeDocument(server, owner, id));
  assert.equal(documents.filter((d) => d.signed).length, 3, 'three documents carry signatures');
  const chain = await verifyAuditChain(server.app.database.db);
  return { documents, auditRecords: chain.records };
}

/** The ids of the owner's documents. */
async function documentIds(server: TestServer): Promise<string[]> {
  const rows = await server.app.database.db
    .selectFrom('documents')
    .innerJoin('users', 'users.id', 'documents.owner_id')
    .select('documents.id')
    .where('users.name', '=', 'owner')
    .where('documents.kind', '=', 'document')
    .orderBy('documents.id')
    .execute();
  return rows.map((row) => row.id);
}

async function describeDocument(server: TestServer, token: string, id: string): Promise<ExpectedDocument> {
  const shown = await server.api('GET', `/documents/${id}`, { token });
  assert.equal(shown.status, 200, shown.text);
  const doc = shown.body.results[0];
  const fileIds: string[] = [
    doc.pdfFile.content,
    ...(doc.file ?? []).map((f: { content: string }) => f.content),
  ];
  const files: Record<string, string> = {};
  for (const fileId of fileIds) files[fileId] = sha256(await download(server, token, fileId));
  const signatures = await countSignatures(server, token, id);
  return {
    id,
    title: doc.documentTitle ?? doc.title,
    version: doc._version,
    files,
    mainFile: doc.pdfFile.content,
    signatures,
    signed: signatures > 0,
  };
}

async function download(server: TestServer, token: string, fileId: string): Promise<Buffer> {
  const response = await fetch(`${server.url}/api/v1/files/loadFile/hash/${fileId}?token=${token}`);
  assert.equal(response.status, 200, `file ${fileId}: ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}

async function countSignatures(server: TestServer, token: string, id: string): Promise<number> {
  const report = await server.api('GET', `/documents/${id}/verify`, { token });
  assert.equal(report.status, 200, report.text);
  return (report.body.signatures ?? []).length as number;
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * `server` (another process's database, restored or migrated) shows `expected`: the owner logs in
 * with the password they had; every document is there at its version, each file downloads with the
 * same SHA-256, pdfsig finds every signature valid, every signature verifies as trusted (the
 * development CA came along: a server that made its own would not trust them), and the audit chain is
 * intact and holds every earlier record.
 */
export async function assertSameInstallation(
  server: TestServer,
  expected: Installation,
  space: Workspace,
): Promise<void> {
  const owner = await server.login('owner', PASSWORD);
  for (const doc of expected.documents) {
    const shown = await server.api('GET', `/documents/${doc.id}`, { token: owner });
    assert.equal(shown.status, 200, `${doc.title}: ${shown.text}`);
    assert.equal(shown.body.results[0]._version, doc.version, `${doc.title}: version`);
    for (const [fileId, hash] of Object.entries(doc.files)) {
      const bytes = await download(server, owner, fileId);
      assert.equal(sha256(bytes), hash, `${doc.title}: file ${fileId} has the same bytes`);
      if (fileId === doc.mainFile && doc.signatures > 0 && hasTool('pdfsig')) {
        const verdicts = await pdfsig(await space.write(`${doc.id}.pdf`, bytes));
        assert.equal(verdicts.length, doc.signatures, `${doc.title}: pdfsig sees every signature`);
        for (const v of verdicts) assert.equal(v.validation, 'Signature is Valid.', v.raw);
      }
    }
    const report = await server.api('GET', `/documents/${doc.id}/verify`, { token: owner });
    assert.equal(report.status, 200, report.text);
    assert.equal(report.body.signatures.length, doc.signatures);
    for (const signature of report.body.signatures) {
      assert.equal(
        signature.indication,
        'TOTAL_PASSED',
        `${doc.title}: trusted through the installation's CA (${JSON.stringify(signature.certificate?.problems)})`,
      );
    }
  }
  const chain = await verifyAuditChain(server.app.database.db);
  assert.deepEqual(chain.broken, [], 'the audit chain is intact');
  assert.ok(
    chain.records >= expected.auditRecords,
    `${chain.records} audit records, ${expected.auditRecords} before`,
  );
}

/** `signery <args>` as a child process, as an operator runs it. */
export function signery(args: string[], env: Record<string, string>): ChildProcess {
  // The command reads its installation from the environment: nothing of the test runner's own.
  const inherited = Object.entries(process.env).filter(
    ([k]) => !/^(DATABASE_|S3_|TEST_DATABASE_URL$|DATA_DIR$)/.test(k),
  );
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    env: { ...Object.fromEntries(inherited), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

export interface Finished {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Waits for `child` to end and answers what it wrote; `onLine` hears each line of its standard error
 * as it comes (progress), and may kill it.
 */
export function finished(child: ChildProcess, onLine?: (line: string) => void): Promise<Finished> {
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderr += `${line}\n`;
    onLine?.(line);
  });
  return new Promise((resolve) => {
    child.on('close', (status, signal) => resolve({ status, signal, stdout, stderr }));
  });
}

/** Runs `signery <args>` to its end. */
export function runSignery(args: string[], env: Record<string, string>): Promise<Finished> {
  return finished(signery(args, env));
}

import { performance } from 'node:perf_hooks';
import { makePdf } from '../helpers/pdf.js';
import { ADMIN, callApi, type ApiResponse, type CallOptions } from '../helpers/server.js';

/** One request a client sent and what it was answered (status 0: no answer at all). */
export interface Outcome {
  method: string;
  path: string;
  status: number;
  /** performance.now() when it was sent and answered. */
  startedAt: number;
  endedAt: number;
}

const at = (x: number, y: number) => ({ percentX: x, percentY: y, percentWidth: 0.25, percentHeight: 0.08 });

/**
 * Integrators at work through the proxy: each client uploads a PDF, creates a document from it, signs
 * it, reads it back, downloads the signed file, and now and then logs in and runs a report — over and
 * over until stopped. It keeps what was acknowledged (answered 200), to check later that the database
 * holds every acknowledged change, and every outcome, to say which requests failed and when.
 */
export class Traffic {
  readonly outcomes: Outcome[] = [];
  /** Uploads answered 200 (file ids). */
  readonly uploads: string[] = [];
  /** Documents whose creation was answered 200, with the last `_version` a change of theirs was answered with. */
  readonly documents = new Map<string, number>();
  /** Documents whose signing was answered 200. */
  readonly signed = new Set<string>();
  /** Reads that did not show a change acknowledged before they were sent. */
  readonly staleReads: string[] = [];
  #iterations = 0;
  #stopping = false;
  readonly #clients: Promise<void>[];
  readonly #url: string;
  readonly #token: string;
  #waiters: { count: number; resolve: () => void }[] = [];

  constructor(url: string, token: string, clients: number) {
    this.#url = url;
    this.#token = token;
    this.#clients = Array.from({ length: clients }, (_, client) => this.#run(client));
  }

  get iterations(): number {
    return this.#iterations;
  }

  /** Resolves once `count` more rounds (of all clients together) have finished. */
  rounds(count: number): Promise<void> {
    return new Promise((resolve) => this.#waiters.push({ count: this.#iterations + count, resolve }));
  }

  /** The requests answered otherwise than the flow expects (not 2xx). */
  failures(): Outcome[] {
    return this.outcomes.filter((outcome) => outcome.status < 200 || outcome.status > 299);
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.#clients);
  }

  async #run(client: number): Promise<void> {
    for (let round = 0; !this.#stopping; round++) {
      await this.#round(client, round);
      this.#iterations += 1;
      for (const waiter of this.#waiters.filter((w) => w.count <= this.#iterations)) waiter.resolve();
      this.#waiters = this.#waiters.filter((w) => w.count > this.#iterations);
    }
  }

  async #round(client: number, round: number): Promise<void> {
    const title = `Scale-out ${client}-${round}`;
    const uploaded = await this.#call('POST', '/files/saveFile', {
      form: { file: { name: `${title}.pdf`, type: 'application/pdf', bytes: makePdf({ lines: [title] }) } },
    });
    if (uploaded.status !== 200) return;
    this.uploads.push(uploaded.body.file.id);
    const created = await this.#call('POST', '/documents', {
      body: { body: { documentTitle: title, pdfFile: { content: uploaded.body.file.id } } },
    });
    if (created.status !== 200) return;
    const id = created.body.results[0].documentId as string;
    this.documents.set(id, 1);
    const signed = await this.#call('PUT', '/documents/sign/1', {
      body: { id, signatures: [{ type: 'signature', pages: [1], position: at(0.1, 0.8) }] },
    });
    if (signed.status === 200) {
      this.documents.set(id, 2);
      this.signed.add(id);
    }
    const read = await this.#call('GET', `/documents/${id}`, {});
    if (read.status !== 200) return;
    const document = read.body.results[0];
    if (document._version < (this.documents.get(id) ?? 1)) this.staleReads.push(id);
    await this.#call('GET', `/files/loadFile/hash/${document.pdfFile.content}`, {});
    if (round % 4 === client % 4) {
      await this.#call('POST', '/login', { body: { name: ADMIN.name, password: ADMIN.password } });
      await this.#call('POST', '/search/reports', { body: { query: { size: 5 } } });
    }
  }

  async #call(method: string, path: string, call: CallOptions): Promise<ApiResponse> {
    const startedAt = performance.now();
    const outcome: Outcome = { method, path, status: 0, startedAt, endedAt: startedAt };
    try {
      const token = path === '/login' ? undefined : this.#token;
      const response = await callApi(this.#url, method, path, { ...call, ...(token ? { token } : {}) });
      outcome.status = response.status;
      return response;
    } catch {
      return { status: 0, headers: new Headers(), body: undefined, text: '' };
    } finally {
      outcome.endedAt = performance.now();
      this.outcomes.push(outcome);
    }
  }
}

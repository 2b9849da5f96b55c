import pg from 'pg';
import { JOBS_CHANNEL, THIS_PROCESS } from './job-channel.js';

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

/**
 * The listening side of the cross-process doorbell (jobs/doorbell.ts): one connection of its own
 * per process, outside the pool (a pooled connection would lose its LISTEN when given back), opened
 * when the first worker subscribes and closed when the last one leaves. A lost connection is
 * opened again with a growing pause; meanwhile workers still poll, and after each (re)connection
 * every subscriber is woken once, for what was enqueued while nobody listened.
 */
export class JobNotifications {
  readonly #config: pg.ClientConfig;
  /** Each subscriber's wake-up, and what it does with a lost connection (logs it). */
  readonly #listeners = new Map<() => void, (error: unknown) => void>();
  #client: pg.Client | undefined;
  #retry: NodeJS.Timeout | undefined;
  #retryMs = FIRST_RETRY_MS;

  /** `config` connects as the pool does (its search_path names the schema, hence the channel). */
  constructor(config: pg.ClientConfig) {
    this.#config = config;
  }

  /** Calls `listener` whenever a transaction that enqueued a job commits, on any node. */
  subscribe(listener: () => void, onError: (error: unknown) => void = () => undefined): () => void {
    this.#listeners.set(listener, onError);
    if (!this.#client && !this.#retry) this.#connect();
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.close();
    };
  }

  /** Stops listening (subscribers are kept, and a later subscribe listens again). */
  close(): void {
    clearTimeout(this.#retry);
    this.#retry = undefined;
    const client = this.#client;
    this.#client = undefined;
    client?.end().catch(() => undefined);
  }

  #connect(): void {
    const client = new pg.Client(this.#config);
    this.#client = client;
    // A NOTIFY this process sent after its own commit: its workers were woken in the process.
    client.on('notification', (message) => {
      if (message.payload !== THIS_PROCESS) this.#ring();
    });
    client.on('error', (error) => this.#lost(client, error));
    client.on('end', () => this.#lost(client, new Error('the LISTEN connection closed')));
    client
      .connect()
      // The channel as the notifying statements name it: the same expression, the same schema.
      .then(() => client.query<{ channel: string }>(`select ${JOBS_CHANNEL} as channel`))
      .then(({ rows }) => client.query(`listen "${rows[0]?.channel ?? ''}"`))
      .then(() => {
        this.#retryMs = FIRST_RETRY_MS;
        this.#ring();
      })
      .catch((error: unknown) => this.#lost(client, error));
  }

  #ring(): void {
    for (const listener of this.#listeners.keys()) listener();
  }

  #lost(client: pg.Client, error: unknown): void {
    // Events of a connection already replaced or closed on purpose.
    if (this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => undefined);
    for (const onError of this.#listeners.values()) onError(error);
    if (this.#listeners.size === 0) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (this.#listeners.size > 0) this.#connect();
    }, this.#retryMs);
    this.#retry.unref();
    this.#retryMs = Math.min(MAX_RETRY_MS, this.#retryMs * 2);
  }
}

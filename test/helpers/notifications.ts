import pg from 'pg';
import { JOBS_CHANNEL } from '../../src/store/db/postgres/job-channel.js';

/** A plain PostgreSQL connection listening on a schema's job channel. */
export interface ChannelListener {
  /** The payload of every NOTIFY heard so far, in order (tests take them out with splice). */
  heard: string[];
  channel: string;
  client: pg.Client;
  close(): Promise<void>;
}

/**
 * Listens on the job channel of `schema` with a connection of its own: unlike a node's listening
 * connection it hears every NOTIFY, its payload included.
 */
export async function listenToJobChannel(url: string, schema: string): Promise<ChannelListener> {
  const client = new pg.Client({ connectionString: url, options: `-c search_path="${schema}"` });
  await client.connect();
  const heard: string[] = [];
  client.on('notification', (message) => heard.push(message.payload ?? ''));
  const { rows } = await client.query<{ channel: string }>(`select ${JOBS_CHANNEL} as channel`);
  const channel = rows[0]!.channel;
  await client.query(`listen "${channel}"`);
  return { heard, channel, client, close: () => client.end() };
}

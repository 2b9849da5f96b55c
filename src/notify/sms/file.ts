import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SmsMessage, SmsSender } from './sms-sender.js';

/**
 * Without an SMS provider, each message is a JSON file in DATA_DIR/sms (Contract).
 *
 * ```ts
 * const sms = new FileSmsSender({ dir: join(config.dataDir, 'sms') });
 * ```
 */
export class FileSmsSender implements SmsSender {
  readonly #dir: string;

  constructor(options: { dir: string }) {
    this.#dir = options.dir;
  }

  async send(message: SmsMessage): Promise<void> {
    await mkdir(this.#dir, { recursive: true });
    const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID()}.json`;
    const temporary = join(this.#dir, `.${name}.tmp`);
    await writeFile(temporary, JSON.stringify({ ...message, at: new Date().toISOString() }));
    await rename(temporary, join(this.#dir, name));
  }
}

import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { envelopeOf, type Mailer, type OutgoingMail } from './mailer.js';

/**
 * Without SMTP_URL every message is written as an RFC 822 file `DATA_DIR/mail/<time>-<id>.eml`
 * (Contract), complete with headers, so it can be opened in a mail client or fed to `sendmail -t`.
 *
 * ```ts
 * const mailer = new EmlFileMailer({ dir: join(config.dataDir, 'mail'), from: config.mailFrom });
 * ```
 */
export class EmlFileMailer implements Mailer {
  readonly #dir: string;
  readonly #from: string;
  readonly #builder = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });

  constructor(options: { dir: string; from: string }) {
    this.#dir = options.dir;
    this.#from = options.from;
  }

  async send(message: OutgoingMail): Promise<void> {
    const info = (await this.#builder.sendMail(envelopeOf(this.#from, message))) as { message: Buffer };
    await mkdir(this.#dir, { recursive: true });
    const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID()}.eml`;
    // Written aside then renamed, so a reader never sees half a message.
    const temporary = join(this.#dir, `.${name}.tmp`);
    await writeFile(temporary, info.message);
    await rename(temporary, join(this.#dir, name));
  }

  async close(): Promise<void> {}
}

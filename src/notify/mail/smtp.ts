import nodemailer, { type Transporter } from 'nodemailer';
import { envelopeOf, type Mailer, type OutgoingMail } from './mailer.js';

/**
 * Mail through an SMTP server (SMTP_URL, e.g. `smtp://user:pass@mail.example.com:587`).
 *
 * ```ts
 * const mailer = new SmtpMailer({ url: config.smtpUrl, from: config.mailFrom });
 * ```
 */
export class SmtpMailer implements Mailer {
  readonly #transport: Transporter;
  readonly #from: string;

  constructor(options: { url: string; from: string }) {
    this.#transport = nodemailer.createTransport(options.url);
    this.#from = options.from;
  }

  async send(message: OutgoingMail): Promise<void> {
    await this.#transport.sendMail(envelopeOf(this.#from, message));
  }

  async close(): Promise<void> {
    this.#transport.close();
  }
}

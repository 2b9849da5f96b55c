import type { SmsMessage, SmsSender } from './sms-sender.js';

/**
 * A provider's HTTP API: POSTs `{to, text}` as JSON to SMS_HTTP_URL with `Authorization: Bearer
 * SMS_HTTP_TOKEN`; any 2xx is success. Most gateways accept this shape or sit behind a small adapter.
 *
 * ```ts
 * const sms = new HttpSmsSender({ url: 'https://sms.example.com/send', token: process.env.SMS_HTTP_TOKEN });
 * ```
 */
export class HttpSmsSender implements SmsSender {
  readonly #url: string;
  readonly #token: string | undefined;

  constructor(options: { url: string; token?: string | undefined }) {
    this.#url = options.url;
    this.#token = options.token;
  }

  async send(message: SmsMessage): Promise<void> {
    const response = await fetch(this.#url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(this.#token ? { authorization: `Bearer ${this.#token}` } : {}),
      },
      body: JSON.stringify(message),
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) throw new Error(`SMS provider answered ${response.status}`);
  }
}

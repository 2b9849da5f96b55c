import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  to: string[];
  raw: string;
}

export interface TestSmtp {
  url: string;
  messages: ReceivedMail[];
  /** Waits until a message to `to` matching `pattern` has arrived, and returns it. */
  waitFor(to: string, pattern?: RegExp, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

/** A real SMTP server on an ephemeral loopback port that keeps what it receives. */
export async function startSmtp(): Promise<TestSmtp> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push({
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async waitFor(to, pattern, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const found = messages.find((m) => m.to.includes(to) && (!pattern || pattern.test(decode(m.raw))));
        if (found) return found;
        await sleep(50);
      }
      throw new Error(
        `no mail to ${to}${pattern ? ` matching ${String(pattern)}` : ''} (got ${messages.length})`,
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The message with quoted-printable soft breaks undone, so links and codes can be matched. */
export function decode(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The share token from an invitation mail's link (`PUBLIC_URL/s/<token>`). */
export function shareTokenOf(mail: ReceivedMail): string {
  const match = /\/s\/(shr_[A-Za-z0-9_-]{43})/.exec(decode(mail.raw));
  if (!match?.[1]) throw new Error('no share link in the mail');
  return match[1];
}

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

/** One leaf of a MIME message: its headers (lower-case names) and its decoded body. */
export interface MimePart {
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * The leaves of a message (multipart bodies opened, base64 and quoted-printable decoded), and its
 * top-level headers: enough to read what a mail client shows (the text and HTML parts, attachments).
 */
export function mimeOf(mail: ReceivedMail): { headers: Record<string, string>; parts: MimePart[] } {
  const split = (raw: string) => {
    const at = raw.search(/\r?\n\r?\n/);
    const head = at < 0 ? raw : raw.slice(0, at);
    const headers: Record<string, string> = {};
    for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
      const colon = line.indexOf(':');
      if (colon > 0)
        headers[line.slice(0, colon).trim().toLowerCase()] = encodedWords(line.slice(colon + 1).trim());
    }
    return {
      headers,
      body: at < 0 ? '' : raw.slice(raw.slice(at).search(/\n\r?\n/) + at + 1).replace(/^\r?\n/, ''),
    };
  };
  const leaves = (raw: string): MimePart[] => {
    const { headers, body } = split(raw);
    const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
    if (/^multipart\//i.test(headers['content-type'] ?? '') && boundary) {
      const pieces = body.split(`--${boundary}`).slice(1);
      return pieces
        .filter((piece) => !piece.startsWith('--'))
        .flatMap((piece) => leaves(piece.replace(/^\r?\n/, '')));
    }
    const encoding = (headers['content-transfer-encoding'] ?? '').toLowerCase();
    const decoded =
      encoding === 'base64'
        ? Buffer.from(body.replace(/\s+/g, ''), 'base64')
        : encoding === 'quoted-printable'
          ? Buffer.from(decode(body), 'latin1')
          : Buffer.from(body, 'utf8');
    return [{ headers, body: decoded }];
  };
  return { headers: split(mail.raw).headers, parts: leaves(mail.raw) };
}

/** A header value with its RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`) decoded. */
function encodedWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?([^?]+)\?([BQ])\?([^?]*)\?=/gi, (_m, _charset: string, kind: string, text: string) =>
      kind.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64').toString('utf8')
        : Buffer.from(decode(text.replace(/_/g, ' ')), 'latin1').toString('utf8'),
    );
}

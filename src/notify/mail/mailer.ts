/**
 * A file sent with a message, named by its stored record: the job that sends the message reads it
 * then, so a queued message stays small and carries the file as it is when it goes out.
 */
export interface StoredAttachment {
  filename: string;
  contentType: string;
  tenantId: string;
  fileId: string;
}

/** One e-mail, as it is queued (notification-jobs.ts). */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The person the message comes from (the sharer): shown as "<name> via <MAIL_FROM's name>". */
  fromName?: string | undefined;
  /** Where answers go: the sharer's own address, never the service's. */
  replyTo?: string | undefined;
  attachments?: StoredAttachment[] | undefined;
}

/** One e-mail as a mailer sends it, its attachments read. */
export interface OutgoingMail extends Omit<MailMessage, 'attachments'> {
  attachments?: { filename: string; contentType: string; content: Buffer }[] | undefined;
}

/**
 * Sends e-mail. Implementations: smtp.ts (SMTP_URL) and eml-file.ts (no SMTP_URL: one RFC 822 file per
 * message under DATA_DIR/mail). Callers do not send directly: they queue a `mail.send` job in the
 * transaction of the change that causes the message (notification-jobs.ts), so nothing is lost on a crash.
 */
export interface Mailer {
  send(message: OutgoingMail): Promise<void>;
  close(): Promise<void>;
}

/**
 * The envelope nodemailer takes for a message: From is MAIL_FROM, shown as "<sharer> via <its name>"
 * when the message speaks for a person, so the recipient sees who asks before what serves it.
 */
export function envelopeOf(mailFrom: string, message: OutgoingMail) {
  const { fromName, replyTo, ...rest } = message;
  const address = /<([^>]+)>/.exec(mailFrom)?.[1] ?? mailFrom.trim();
  const service = /^\s*"?([^"<]+?)"?\s*</.exec(mailFrom)?.[1] ?? 'Signery';
  return {
    ...rest,
    from: fromName ? { name: `${fromName} via ${service}`, address } : mailFrom,
    ...(replyTo ? { replyTo } : {}),
  };
}

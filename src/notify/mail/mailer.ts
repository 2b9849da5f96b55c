/** One e-mail, as every mailer takes it. */
export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * Sends e-mail. Implementations: smtp.ts (SMTP_URL) and eml-file.ts (no SMTP_URL: one RFC 822 file per
 * message under DATA_DIR/mail). Callers do not send directly: they queue a `mail.send` job in the
 * transaction of the change that causes the message (send-mail-job.ts), so nothing is lost on a crash.
 */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
  close(): Promise<void>;
}

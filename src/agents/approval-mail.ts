import type { MailMessage } from '../notify/mail/mailer.js';
import { escapeHtml } from '../notify/mail/share-mail.js';

/** What an agent proposed, as the mail to the key's owner says it: the act, in words, for whom. */
export function actInWords(tool: string, request: unknown): string {
  const shape = (request ?? {}) as {
    data?: { shareTo?: unknown; sharePurpose?: unknown }[];
    shares?: unknown[];
  };
  if (tool === 'prepare_share') {
    const recipients = (shape.data ?? []).map(
      (r) =>
        `${typeof r.shareTo === 'string' ? r.shareTo : '?'} (${typeof r.sharePurpose === 'string' ? r.sharePurpose : 'view'})`,
    );
    return `share it with ${recipients.join(', ') || 'no one'}`;
  }
  if (tool === 'send_reminder')
    return shape.shares?.length
      ? `remind ${shape.shares.length} of its recipients`
      : 'remind its recipients who have not acted';
  return tool;
}

/**
 * The mail to the owner of the API key that proposed an act (issue 42, Deliver 3: "or from a link
 * mailed to the key's owner"). Its link opens the approval page (PUBLIC_URL/approve/{id}) and carries
 * no credential (DESIGN: no credential in a URL): the person signs in there before deciding, so an
 * agent that reads its owner's mailbox cannot approve its own act with it.
 */
export function approvalMail(options: {
  to: string;
  documentTitle: string;
  tool: string;
  request: unknown;
  keyId: string;
  link: string;
  expiresAt: Date;
}): MailMessage {
  const act = actInWords(options.tool, options.request);
  const subject = `Approve or reject: an agent asks to ${act.split(' ')[0]} “${options.documentTitle}”`;
  const lines = [
    `An AI agent using your API key ${options.keyId} asks to ${act} for the document “${options.documentTitle}”.`,
    'Nothing is done until you approve it. Sign in to read the exact request, then approve or reject it.',
    `If nobody decides, the request expires at ${options.expiresAt.toISOString().replace('T', ' ').slice(0, 16)} UTC.`,
  ];
  const text = [...lines, `Review the request: ${options.link}`].join('\n\n');
  const html = [
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    '<body style="font-family:sans-serif;line-height:1.5;color:#111">',
    ...lines.map((line) => `<p>${escapeHtml(line)}</p>`),
    `<p><a href="${escapeHtml(options.link)}" style="display:inline-block;padding:12px 20px;background:#1d4ed8;color:#fff;text-decoration:none;border-radius:4px;font-weight:bold">Review the request</a></p>`,
    `<p style="font-size:90%;color:#444">${escapeHtml(options.link)}</p>`,
    '</body></html>',
  ].join('');
  return { to: options.to, subject, text, html };
}

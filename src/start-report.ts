import { join } from 'node:path';
import type { Config } from './base/config.js';

/** One line of what a start tells the person who ran it. */
export interface StartLine {
  level: 'info' | 'warn';
  message: string;
}

/**
 * What a start says in a few lines a person reads (issue 41): where the server answers, where mail
 * goes, a warning when seals are made with the development certificate, and whether this start
 * created the administrator. No secret is ever in them (SMTP_URL's credentials are left out).
 *
 * ```ts
 * for (const { level, message } of startReport(config, { serving: true, worker: true, adminCreated }))
 *   app.server.log[level](message);
 * ```
 */
export function startReport(
  config: Config,
  node: { serving: boolean; worker: boolean; adminCreated: boolean },
): StartLine[] {
  const lines: StartLine[] = [];
  if (node.serving) {
    lines.push({
      level: 'info',
      message: `Signery is ready at ${config.publicUrl} (API: ${config.publicUrl}/api/v1, its documentation: ${config.publicUrl}/api/v1/docs)`,
    });
  }
  const sender = node.worker
    ? ''
    : ' by the job worker nodes (this node runs no job worker: JOB_WORKER=false)';
  lines.push({
    level: 'info',
    message: config.smtpUrl
      ? `Mail is sent${sender} through the SMTP server ${smtpServer(config.smtpUrl)}`
      : `Mail is not sent: each message is written${sender} as an .eml file under ${join(config.dataDir, 'mail')} (set SMTP_URL to send it)`,
  });
  if (!config.seal.p12 && !config.seal.pkcs11Module && config.seal.provider === 'internal') {
    lines.push({
      level: 'warn',
      message:
        'WARNING: documents are sealed with a development certificate this installation made itself, which ' +
        'no one else trusts: set SEAL_P12 (or SEAL_PKCS11_MODULE) before signing real documents',
    });
  }
  if (node.adminCreated && config.admin.email) {
    lines.push({
      level: 'info',
      message: `Created the administrator ${config.admin.email.trim().toLowerCase()}: log in with ADMIN_PASSWORD`,
    });
  }
  return lines;
}

/** `host:port` of an SMTP URL, without its credentials or options. */
function smtpServer(url: string): string {
  try {
    const parsed = new URL(url);
    const port = parsed.port || (parsed.protocol === 'smtps:' ? '465' : '587');
    return `${parsed.hostname}:${port}`;
  } catch {
    return '(SMTP_URL is not a URL)';
  }
}

import type { MailMessage, StoredAttachment } from './mailer.js';

type Kind = 'invitation' | 'reminder' | 'completed' | 'rejected' | 'code';
interface Wording {
  subject: (title: string, purpose: string) => string;
  body: (who: string, title: string, purpose: string) => string;
  open: string;
  note: string;
}

/** What every message of a language says beside its kind's own words. */
interface Common {
  /** The invitation's subject for a share that asks nothing (`view`). */
  shared: (title: string) => string;
  /** The button of a sign share. */
  reviewAndSign: string;
  deadline: (date: string) => string;
  attached: string;
  notAttached: string;
}

const ACTIONS: Record<string, Record<string, string>> = {
  en: {
    sign: 'sign',
    view: 'view',
    edit: 'edit',
    approve: 'approve',
    review: 'review',
    accept: 'accept',
    execute: 'complete',
  },
  de: {
    sign: 'unterschreiben',
    view: 'ansehen',
    edit: 'bearbeiten',
    approve: 'genehmigen',
    review: 'prüfen',
    accept: 'annehmen',
    execute: 'bearbeiten',
  },
  fr: {
    sign: 'signer',
    view: 'consulter',
    edit: 'modifier',
    approve: 'approuver',
    review: 'relire',
    accept: 'accepter',
    execute: 'traiter',
  },
};

/** Mail texts in the languages we have; others fall back to English (issue: "in the share's language where we have it"). */
const WORDING: Record<string, Record<Kind, Wording> & { common: Common }> = {
  en: {
    common: {
      shared: (t) => `“${t}” was shared with you`,
      reviewAndSign: 'Review and sign',
      deadline: (d) => `Please respond by ${d}.`,
      attached: 'The signed PDF is attached.',
      notAttached: 'The signed PDF is too large to attach to this message.',
    },
    invitation: {
      subject: (t, p) => `Please ${p} “${t}”`,
      body: (w, t, p) => `${w} asks you to ${p} the document “${t}”.`,
      open: 'Open the document',
      note: 'Message from the sender:',
    },
    reminder: {
      subject: (t, p) => `Reminder: please ${p} “${t}”`,
      body: (w, t, p) => `A reminder from ${w}: please ${p} the document “${t}”.`,
      open: 'Open the document',
      note: 'Message from the sender:',
    },
    completed: {
      subject: (t) => `“${t}” is complete`,
      body: (_w, t) => `Everyone has signed “${t}”.`,
      open: 'Open the document',
      note: '',
    },
    rejected: {
      subject: (t) => `“${t}” was rejected`,
      body: (w, t) => `${w} rejected the document “${t}”.`,
      open: 'Open the document',
      note: 'Reason given:',
    },
    code: {
      subject: () => 'Your one-time code',
      body: (_w, t) => `Your code to open “${t}” is below. It is valid for 10 minutes.`,
      open: '',
      note: 'Code:',
    },
  },
  de: {
    common: {
      shared: (t) => `„${t}“ wurde für Sie freigegeben`,
      reviewAndSign: 'Prüfen und unterschreiben',
      deadline: (d) => `Bitte bis ${d} erledigen.`,
      attached: 'Das unterschriebene PDF ist angehängt.',
      notAttached: 'Das unterschriebene PDF ist zu groß, um es anzuhängen.',
    },
    invitation: {
      subject: (t, p) => `Bitte „${t}“ ${p}`,
      body: (w, t, p) => `${w} bittet Sie, das Dokument „${t}“ zu ${p}.`,
      open: 'Dokument öffnen',
      note: 'Nachricht des Absenders:',
    },
    reminder: {
      subject: (t, p) => `Erinnerung: Bitte „${t}“ ${p}`,
      body: (w, t, p) => `Eine Erinnerung von ${w}: Bitte das Dokument „${t}“ ${p}.`,
      open: 'Dokument öffnen',
      note: 'Nachricht des Absenders:',
    },
    completed: {
      subject: (t) => `„${t}“ ist abgeschlossen`,
      body: (_w, t) => `Alle haben „${t}“ unterschrieben.`,
      open: 'Dokument öffnen',
      note: '',
    },
    rejected: {
      subject: (t) => `„${t}“ wurde abgelehnt`,
      body: (w, t) => `${w} hat das Dokument „${t}“ abgelehnt.`,
      open: 'Dokument öffnen',
      note: 'Begründung:',
    },
    code: {
      subject: () => 'Ihr Einmalcode',
      body: (_w, t) => `Ihr Code zum Öffnen von „${t}“ steht unten. Er gilt 10 Minuten.`,
      open: '',
      note: 'Code:',
    },
  },
  fr: {
    common: {
      shared: (t) => `« ${t} » a été partagé avec vous`,
      reviewAndSign: 'Consulter et signer',
      deadline: (d) => `Merci de répondre avant le ${d}.`,
      attached: 'Le PDF signé est joint à ce message.',
      notAttached: 'Le PDF signé est trop volumineux pour être joint à ce message.',
    },
    invitation: {
      subject: (t, p) => `Merci de ${p} « ${t} »`,
      body: (w, t, p) => `${w} vous demande de ${p} le document « ${t} ».`,
      open: 'Ouvrir le document',
      note: 'Message de l’expéditeur :',
    },
    reminder: {
      subject: (t, p) => `Rappel : merci de ${p} « ${t} »`,
      body: (w, t, p) => `Un rappel de ${w} : merci de ${p} le document « ${t} ».`,
      open: 'Ouvrir le document',
      note: 'Message de l’expéditeur :',
    },
    completed: {
      subject: (t) => `« ${t} » est terminé`,
      body: (_w, t) => `Tout le monde a signé « ${t} ».`,
      open: 'Ouvrir le document',
      note: '',
    },
    rejected: {
      subject: (t) => `« ${t} » a été refusé`,
      body: (w, t) => `${w} a refusé le document « ${t} ».`,
      open: 'Ouvrir le document',
      note: 'Motif :',
    },
    code: {
      subject: () => 'Votre code à usage unique',
      body: (_w, t) => `Votre code pour ouvrir « ${t} » figure ci-dessous. Il est valable 10 minutes.`,
      open: '',
      note: 'Code :',
    },
  },
};

const ENGLISH = WORDING.en as (typeof WORDING)[string];

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A deadline as people of the language write it, in UTC (the mail cannot know the reader's zone). */
function deadlineText(language: string, at: string): string {
  const when = new Intl.DateTimeFormat(language, {
    dateStyle: 'long',
    timeStyle: 'short',
    timeZone: 'UTC',
  }).format(new Date(at));
  return `${when} UTC`;
}

/**
 * A reminder as a text message (PUT /share/reminder with `reminderType: 'sms'`): the reminder mail's
 * subject in the share's language and its link (a new one for an external recipient; the links of
 * earlier messages keep working while the share is live).
 */
export function reminderSms(options: {
  language?: string | undefined;
  documentTitle: string;
  purpose: string;
  link: string;
}): string {
  const language = options.language && options.language in WORDING ? options.language : 'en';
  const table = WORDING[language] ?? ENGLISH;
  const purpose = ACTIONS[language]?.[options.purpose] ?? options.purpose;
  const subject = table.reminder.subject(options.documentTitle, purpose);
  return `${subject}: ${options.link}`;
}

/**
 * Builds a share notification in the share's language where we have it, as a plain-text and an HTML
 * part saying the same: what is asked of the reader (its subject names the action), by whom, until
 * when, and one button to the page that serves them. `sender` is the person the message speaks for:
 * the From line shows their name and answers go to their address.
 */
export function shareMail(options: {
  kind: Kind;
  to: string;
  language?: string | undefined;
  documentTitle: string;
  /** Who the message speaks for, as the text names them. */
  from: string;
  sender?: { name: string; email?: string | null | undefined } | undefined;
  purpose?: string;
  link?: string | undefined;
  note?: string | null | undefined;
  /** The share's `validUntil`. */
  deadline?: string | null | undefined;
  /** A completed document's signed PDF; `false` when it was too large to attach. */
  attachment?: StoredAttachment | false | undefined;
}): MailMessage {
  const language = options.language && options.language in WORDING ? options.language : 'en';
  const table = WORDING[language] ?? ENGLISH;
  const words = table[options.kind];
  const common = table.common;
  const purposeKey = options.purpose ?? 'view';
  const purpose = ACTIONS[language]?.[purposeKey] ?? purposeKey;
  const title = options.documentTitle;
  const subject =
    options.kind === 'invitation' && purposeKey === 'view'
      ? common.shared(title)
      : words.subject(title, purpose);
  const lines = [words.body(options.from, title, purpose)];
  if (options.deadline && (options.kind === 'invitation' || options.kind === 'reminder'))
    lines.push(common.deadline(deadlineText(language, options.deadline)));
  if (options.attachment !== undefined) lines.push(options.attachment ? common.attached : common.notAttached);
  const note = options.note ? `${words.note} ${options.note}` : '';
  const button = options.kind === 'invitation' && purposeKey === 'sign' ? common.reviewAndSign : words.open;
  const linkLines = options.link ? [`${button}: ${options.link}`] : [];
  const text = [lines.join(' '), note, ...linkLines].filter(Boolean).join('\n\n');
  const html = [
    `<!doctype html><html lang="${language}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    '<body style="font-family:sans-serif;line-height:1.5;color:#111">',
    ...lines.map((line) => `<p>${escapeHtml(line)}</p>`),
    note ? `<p>${escapeHtml(words.note)} <strong>${escapeHtml(options.note ?? '')}</strong></p>` : '',
    options.link
      ? `<p><a href="${escapeHtml(options.link)}" style="display:inline-block;padding:12px 20px;background:#1d4ed8;color:#fff;text-decoration:none;border-radius:4px;font-weight:bold">${escapeHtml(button)}</a></p>` +
        `<p style="font-size:90%;color:#444">${escapeHtml(options.link)}</p>`
      : '',
    '</body></html>',
  ].join('');
  return {
    to: options.to,
    subject,
    text,
    html,
    ...(options.sender ? { fromName: options.sender.name } : {}),
    ...(options.sender?.email ? { replyTo: options.sender.email } : {}),
    ...(options.attachment ? { attachments: [options.attachment] } : {}),
  };
}

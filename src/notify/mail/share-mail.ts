import type { MailMessage } from './mailer.js';

type Kind = 'invitation' | 'reminder' | 'completed' | 'rejected' | 'code';

interface Wording {
  subject: (title: string) => string;
  body: (who: string, title: string, purpose: string) => string;
  open: string;
  note: string;
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
const WORDING: Record<string, Record<Kind, Wording>> = {
  en: {
    invitation: {
      subject: (t) => `Please review “${t}”`,
      body: (w, t, p) => `${w} asks you to ${p} the document “${t}”.`,
      open: 'Open the document',
      note: 'Message from the sender:',
    },
    reminder: {
      subject: (t) => `Reminder: “${t}” is waiting for you`,
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
    invitation: {
      subject: (t) => `Bitte „${t}“ bearbeiten`,
      body: (w, t, p) => `${w} bittet Sie, das Dokument „${t}“ zu ${p}.`,
      open: 'Dokument öffnen',
      note: 'Nachricht des Absenders:',
    },
    reminder: {
      subject: (t) => `Erinnerung: „${t}“ wartet auf Sie`,
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
    invitation: {
      subject: (t) => `Document « ${t} » à traiter`,
      body: (w, t, p) => `${w} vous demande de ${p} le document « ${t} ».`,
      open: 'Ouvrir le document',
      note: 'Message de l’expéditeur :',
    },
    reminder: {
      subject: (t) => `Rappel : « ${t} » vous attend`,
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

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Builds a share notification (HTML and text) in the share's language where we have it. */
export function shareMail(options: {
  kind: Kind;
  to: string;
  language?: string | undefined;
  documentTitle: string;
  from: string;
  purpose?: string;
  link?: string | undefined;
  note?: string | null | undefined;
}): MailMessage {
  const language = options.language && WORDING[options.language] ? options.language : 'en';
  const words = (WORDING[language] ?? WORDING.en)?.[options.kind] as Wording;
  const purpose = ACTIONS[language]?.[options.purpose ?? 'view'] ?? options.purpose ?? '';
  const body = words.body(options.from, options.documentTitle, purpose);
  const note = options.note ? `${words.note} ${options.note}` : '';
  const text = [body, note, options.link ? `${words.open}: ${options.link}` : '']
    .filter(Boolean)
    .join('\n\n');
  const html = [
    `<!doctype html><html lang="${language}"><body style="font-family:sans-serif;line-height:1.5">`,
    `<p>${escapeHtml(body)}</p>`,
    note ? `<p>${escapeHtml(words.note)} <strong>${escapeHtml(options.note ?? '')}</strong></p>` : '',
    options.link
      ? `<p><a href="${escapeHtml(options.link)}" style="display:inline-block;padding:10px 16px;background:#1d4ed8;color:#fff;text-decoration:none;border-radius:4px">${escapeHtml(words.open)}</a></p>`
      : '',
    '</body></html>',
  ].join('');
  return { to: options.to, subject: words.subject(options.documentTitle), text, html };
}

import './styles.css';
import './verify.css';
import { renderChrome } from './chrome.js';
import { announce, focusHeading, h } from './dom.js';
import { language, pickLanguage, setLanguage, t } from './i18n.js';
import { vt, type VerifyKey } from './verify-texts.js';
import {
  changesOf,
  findingsOf,
  overallOf,
  stateOf,
  type AuditTrail,
  type Report,
  type ReportSignature,
} from './verdict.js';

/**
 * The public verification page (issue 27), PUBLIC_URL/verify: anyone drops a PDF (or picks one) and
 * reads, in plain words, who signed it, when, whether it changed since, the level proven and the
 * audit trail the file carries; the JSON and ETSI reports can be downloaded. The file goes to POST
 * /verify (no account; the server keeps nothing of it) and stays in this tab's memory only.
 * `?document=<id>` is where a document's QR code leads: the page says which document it is about.
 */

type Failure = { key: VerifyKey; values?: Record<string, string | number>; extra?: string };

type State =
  | { kind: 'idle' }
  | { kind: 'checking'; name: string }
  | { kind: 'failed'; failure: Failure }
  | { kind: 'result'; report: Report; name: string; size: number; checkedAt: Date; urls: Downloads };

interface Downloads {
  /** The checked file's name without `.pdf`, which the downloads are named after. */
  base: string;
  json: string;
  etsi: string | undefined;
}

const main = document.getElementById('main') as HTMLElement;
/** The document a QR code named, when it looks like an id (never echoed otherwise). */
const namedDocument = (() => {
  const id = new URLSearchParams(window.location.search).get('document');
  return id && /^[A-Za-z0-9_-]{1,100}$/.test(id) ? id : undefined;
})();

let state: State = { kind: 'idle' };

function chrome(): void {
  renderChrome(`${vt('title')} · ${t('appName')}`, () => {
    chrome();
    render();
  });
}

const formatTime = (iso: string): string => {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(language(), { dateStyle: 'long', timeStyle: 'long' }).format(date);
};

const formatSize = (bytes: number): string =>
  bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(1)} MB`
    : `${Math.max(1, Math.round(bytes / 1024))} KB`;

/** `documentSigned` → `document signed`: an activity type as words. */
const words = (name: string): string =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_.]/g, ' ')
    .toLowerCase();

function setState(next: State, focus?: 'verdict' | 'error'): void {
  if (state.kind === 'result') {
    URL.revokeObjectURL(state.urls.json);
    if (state.urls.etsi) URL.revokeObjectURL(state.urls.etsi);
  }
  state = next;
  render();
  if (focus === 'verdict') focusHeading(document.getElementById('verdict-title'));
}

function render(): void {
  const heading = h('h1', { id: 'verify-title' }, vt('title'));
  const content: HTMLElement[] = [heading, h('p', { class: 'verify-intro' }, vt('intro'))];
  if (namedDocument) {
    content.push(
      h(
        'p',
        { class: 'message message--info', 'data-testid': 'named-document' },
        vt('document.intro', { id: namedDocument }),
      ),
    );
  }
  content.push(dropZone());
  if (state.kind === 'result') content.push(...result(state));
  main.replaceChildren(h('div', { class: 'verify' }, ...content));
  main.dataset.view = state.kind;
  main.setAttribute('aria-busy', String(state.kind === 'checking'));
}

function dropZone(): HTMLElement {
  // Not shown and not in the accessibility tree: the button below opens it (one control, one name).
  const input = h('input', { type: 'file', accept: 'application/pdf,.pdf', hidden: true });
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    if (file) void check(file);
  });
  const choose = h('button', { type: 'button', class: 'button button--primary' }, vt('drop.choose'));
  choose.addEventListener('click', () => input.click());
  choose.disabled = state.kind === 'checking';
  const status =
    state.kind === 'checking'
      ? h('p', { class: 'message message--info', role: 'status' }, vt('drop.checking', { name: state.name }))
      : state.kind === 'failed'
        ? h(
            'p',
            { class: 'message message--error', role: 'alert', id: 'drop-error' },
            [vt(state.failure.key, state.failure.values), state.failure.extra].filter(Boolean).join(' '),
          )
        : undefined;
  const zone = h(
    'section',
    { class: 'dropzone', 'aria-labelledby': 'drop-title', 'data-testid': 'dropzone' },
    h('h2', { id: 'drop-title', class: 'visually-hidden' }, vt('drop.title')),
    h('p', { class: 'dropzone-lead', 'aria-hidden': 'true' }, vt('drop.zone')),
    h('p', { class: 'dropzone-or', 'aria-hidden': 'true' }, vt('drop.or')),
    choose,
    input,
    h('p', { class: 'hint' }, vt('drop.private')),
    status,
  );
  zone.addEventListener('dragover', (event) => {
    event.preventDefault();
    zone.classList.add('dropzone--over');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('dropzone--over'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('dropzone--over');
    const file = event.dataTransfer?.files[0];
    if (file) void check(file);
  });
  return zone;
}

async function check(file: File): Promise<void> {
  if (state.kind === 'checking') return;
  setState({ kind: 'checking', name: file.name });
  announce(vt('drop.checking', { name: file.name }));
  const form = new FormData();
  form.append('file', file, file.name);
  let response: Response;
  try {
    response = await fetch('/verify?dss=true', { method: 'POST', body: form, credentials: 'omit' });
  } catch {
    return fail({ key: 'error.network' });
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  if (!response.ok) return fail(failureOf(response, body));
  const report = body as Report;
  const base = file.name.replace(/\.pdf$/i, '') || 'document';
  const urls: Downloads = {
    base,
    json: URL.createObjectURL(new Blob([JSON.stringify(report, null, 2)], { type: 'application/json' })),
    etsi: report.dss?.validationReport
      ? URL.createObjectURL(new Blob([report.dss.validationReport], { type: 'application/xml' }))
      : undefined,
  };
  setState(
    { kind: 'result', report, name: file.name, size: file.size, checkedAt: new Date(), urls },
    'verdict',
  );
  announce(vt(`verdict.${overallOf(report)}`));
}

function fail(failure: Failure): void {
  setState({ kind: 'failed', failure });
}

function failureOf(response: Response, body: unknown): Failure {
  const message =
    typeof (body as { message?: unknown })?.message === 'string' ? (body as { message: string }).message : '';
  if (response.status === 413) {
    const mb = /(\d+) MB/.exec(message)?.[1];
    return { key: 'error.tooLarge', extra: mb ? vt('error.limit', { mb }) : undefined };
  }
  if (response.status === 429) {
    return { key: 'error.tooMany', values: { seconds: Number(response.headers.get('retry-after')) || 60 } };
  }
  if (response.status === 400 && /not a PDF/i.test(message)) return { key: 'error.notPdf' };
  if (response.status === 400)
    return { key: 'error.unreadable', values: { detail: message.replace(/^.*ERRORS: /, '') } };
  if (response.status >= 500) return { key: 'error.busy' };
  return { key: 'error.generic', values: { detail: message || `HTTP ${response.status}` } };
}

function result(current: Extract<State, { kind: 'result' }>): HTMLElement[] {
  const { report } = current;
  const overall = overallOf(report);
  const tone =
    overall === 'valid'
      ? 'success'
      : overall === 'invalid'
        ? 'error'
        : overall === 'unsigned'
          ? 'info'
          : 'warning';
  const verdict = h(
    'section',
    { class: `notice verdict verdict--${tone}`, 'aria-labelledby': 'verdict-title', 'data-verdict': overall },
    h('h2', { id: 'verdict-title', class: 'notice-title' }, vt(`verdict.${overall}`)),
    h('p', {}, vt(`verdict.${overall}Body`)),
    h(
      'p',
      { class: 'verify-file' },
      vt('file.checked', {
        name: current.name,
        size: formatSize(current.size),
        time: formatTime(current.checkedAt.toISOString()),
      }),
    ),
    documentMatch(report.auditTrail),
  );
  const sections: HTMLElement[] = [verdict];
  const signatures = report.signatures.filter((s) => s.kind === 'signature');
  const stamps = report.signatures.filter((s) => s.kind === 'document-timestamp');
  if (signatures.length > 0) {
    sections.push(
      h(
        'section',
        { class: 'verify-section', 'aria-labelledby': 'signatures-title' },
        h('h2', { id: 'signatures-title' }, vt('signatures.title')),
        ...signatures.map((signature, i) => signatureCard(signature, i + 1)),
      ),
    );
  }
  if (stamps.length > 0) sections.push(timestamps(stamps));
  if (report.auditTrail) sections.push(auditTrail(report.auditTrail));
  sections.push(downloads(current.urls));
  return sections;
}

function documentMatch(trail: AuditTrail | undefined): HTMLElement | undefined {
  const found = trail?.document?.id;
  if (!namedDocument || !found) return undefined;
  return h(
    'p',
    { class: 'verify-document' },
    found === namedDocument
      ? vt('document.same', { id: namedDocument })
      : vt('document.other', { id: namedDocument, other: found }),
  );
}

function signatureCard(signature: ReportSignature, n: number): HTMLElement {
  const who = signature.signerName ?? signature.signer?.commonName ?? vt('signature.unknown');
  const state = stateOf(signature);
  const findings = findingsOf(signature);
  const changes = changesOf(signature);
  const id = `signature-${n}`;
  const rows: [VerifyKey, string][] = [
    [
      'signature.result',
      vt(state === 'ok' ? 'signature.ok' : state === 'broken' ? 'signature.broken' : 'signature.unconfirmed'),
    ],
    ['signature.who', who],
  ];
  if (signature.signer) {
    rows.push([
      'signature.certificate',
      vt('signature.certificateOf', {
        name: signature.signer.commonName,
        issuer: issuerName(signature.signer.issuerText),
      }),
    ]);
  }
  if (signature.claimedSigningTime)
    rows.push([
      'signature.when',
      vt('signature.whenClaimed', { time: formatTime(signature.claimedSigningTime) }),
    ]);
  rows.push([
    'signature.timestamp',
    signature.timestamp
      ? vt('signature.timestampAt', {
          time: formatTime(signature.timestamp.genTime),
          tsa: signature.timestamp.tsa ?? vt('tsa.unknown'),
        })
      : vt('signature.timestampNone'),
  ]);
  rows.push(['signature.level', signature.level ? vt(`level.${signature.level}`) : vt('level.none')]);
  rows.push([
    'signature.after',
    changes.length === 0
      ? vt('signature.afterNone')
      : changes
          .map((change) =>
            vt(
              change.kind === 'annotation' && change.coversSignedContent
                ? 'change.annotationCovers'
                : `change.${change.kind}`,
              { revision: String(change.revision), pages: change.pages.join(', ') || '–' },
            ),
          )
          .join(' '),
  ]);
  const technical = [
    `${signature.indication}${signature.subIndication ? ` / ${signature.subIndication}` : ''}`,
    ...signature.problems,
    ...signature.certificate.problems,
    ...signature.warnings,
  ];
  return h(
    'article',
    {
      class: `signature-card signature-card--${state}`,
      'aria-labelledby': `${id}-title`,
      'data-state': state,
    },
    h('h3', { id: `${id}-title` }, vt('signature.heading', { n, who })),
    h(
      'dl',
      { class: 'facts' },
      ...rows.flatMap(([key, value]) => [h('dt', {}, vt(key)), h('dd', {}, value)]),
    ),
    findings.length > 0
      ? h(
          'div',
          { class: 'findings' },
          h('h4', {}, vt('signature.problems')),
          h('ul', {}, ...findings.map((finding) => h('li', {}, vt(`broke.${finding}`)))),
        )
      : undefined,
    h(
      'details',
      { class: 'technical' },
      h('summary', {}, vt('signature.details')),
      h('ul', {}, ...technical.map((line) => h('li', {}, line))),
    ),
  );
}

/** `CN=Signery development root CA, O=Signery` → `Signery development root CA`. */
function issuerName(issuer: string): string {
  return /(?:^|,\s*)CN=([^,]+)/.exec(issuer)?.[1] ?? issuer;
}

function timestamps(stamps: ReportSignature[]): HTMLElement {
  return h(
    'section',
    { class: 'verify-section', 'aria-labelledby': 'timestamps-title' },
    h('h2', { id: 'timestamps-title' }, vt('timestamps.title')),
    h('p', {}, vt('timestamps.intro')),
    h(
      'ul',
      {},
      ...stamps.map((stamp) => {
        const findings = findingsOf(stamp);
        return h(
          'li',
          { 'data-state': stateOf(stamp) },
          vt('timestamps.item', {
            time: stamp.timestamp ? formatTime(stamp.timestamp.genTime) : '—',
            tsa: stamp.timestamp?.tsa ?? vt('tsa.unknown'),
            result: vt(stateOf(stamp) === 'broken' ? 'yes.invalid' : 'yes.valid'),
          }),
          findings.length > 0
            ? h('ul', {}, ...findings.map((f) => h('li', {}, vt(`broke.${f}`))))
            : undefined,
        );
      }),
    ),
  );
}

function auditTrail(trail: AuditTrail): HTMLElement {
  const section = h(
    'section',
    { class: 'verify-section', 'aria-labelledby': 'audit-title', 'data-testid': 'audit-trail' },
    h('h2', { id: 'audit-title' }, vt('audit.title')),
  );
  if (!trail.present) {
    section.append(h('p', {}, vt('audit.absent')));
    return section;
  }
  section.append(
    h('p', {}, vt(trail.intact ? 'audit.intact' : 'audit.broken')),
    trail.problems.length > 0 ? h('ul', {}, ...trail.problems.map((p) => h('li', {}, p))) : '',
    trail.coveredBy ? h('p', {}, vt('audit.coveredBy', { signature: trail.coveredBy })) : '',
    trail.document
      ? h('p', {}, vt('audit.document', { title: trail.document.title, id: trail.document.id }))
      : '',
  );
  section.append(
    ...titledList(
      vt('audit.events'),
      h('ol', { class: 'audit-events' }),
      trail.events.map((event) =>
        vt('audit.event', {
          time: formatTime(event.occurredAt),
          activity: words(event.activityType),
          actor: event.actor,
        }),
      ),
    ),
    ...titledList(
      vt('audit.revisions'),
      h('ul', { class: 'audit-revisions' }),
      trail.revisions.map(
        (revision) =>
          `${vt('audit.revision', { revision: revision.revision, reason: words(revision.reason) })} — ${vt(
            revision.inFile ? 'audit.inFile' : 'audit.notInFile',
          )}`,
      ),
    ),
  );
  return section;
}

/** A heading and its list of lines, or nothing when there are none. */
function titledList(
  title: string,
  list: HTMLOListElement | HTMLUListElement,
  lines: string[],
): HTMLElement[] {
  if (lines.length === 0) return [];
  list.append(...lines.map((line) => h('li', {}, line)));
  return [h('h3', {}, title), list];
}

function downloads(urls: Downloads): HTMLElement {
  const link = (href: string, kind: string, name: string, label: string) =>
    h('a', { class: 'button button--secondary', href, 'data-download': kind, download: name }, label);
  return h(
    'section',
    { class: 'verify-section', 'aria-labelledby': 'downloads-title' },
    h('h2', { id: 'downloads-title' }, vt('downloads.title')),
    h(
      'div',
      { class: 'button-row' },
      link(urls.json, 'json', `${urls.base}-verification.json`, vt('downloads.json')),
      urls.etsi && link(urls.etsi, 'etsi', `${urls.base}-etsi-validation-report.xml`, vt('downloads.etsi')),
    ),
  );
}

// A file dropped beside the zone must not make the browser leave the page to show it.
window.addEventListener('dragover', (event) => event.preventDefault());
window.addEventListener('drop', (event) => event.preventDefault());

setLanguage(pickLanguage(undefined, navigator.languages));
chrome();
render();

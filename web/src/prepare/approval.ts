import { ApiFailure, type Api, type DocumentView } from '../api.js';
import { field, focusHeading, h, messageBox, uid } from '../dom.js';
import { apiMessage } from './editor.js';
import { pt, type PrepareKey } from './texts.js';

/** An agent action as GET /agent-actions/{id} answers it (src/agents/agent-action-view.ts). */
interface AgentAction {
  id: string;
  tool: string;
  state: 'pending' | 'executing' | 'executed' | 'rejected' | 'expired' | 'interrupted';
  documentId: string;
  createdBy: string;
  createdAt: string;
  keyId: string;
  expiresAt: string;
  request: unknown;
  decidedBy: string | null;
  decidedAt: string | null;
}

/** The act in words, as the mail to the key's owner says it (src/agents/approval-mail.ts). */
function actText(action: AgentAction): string {
  const request = (action.request ?? {}) as {
    data?: { shareTo?: unknown; sharePurpose?: unknown }[];
    shares?: unknown[];
  };
  if (action.tool === 'prepare_share') {
    const recipients = (request.data ?? []).map(
      (r) =>
        `${typeof r.shareTo === 'string' ? r.shareTo : '?'} (${typeof r.sharePurpose === 'string' ? r.sharePurpose : 'view'})`,
    );
    return pt('approve.share', { recipients: recipients.join(', ') });
  }
  if (action.tool === 'send_reminder') return pt('approve.remind');
  return action.tool;
}

const when = (iso: string) => new Date(iso).toLocaleString();

/**
 * The approval page (issue 42, Deliver 3), at /approve/<id>: the link the mail to the key's owner
 * carries (no credential in it). Signed in, a person reads what an AI agent asked to do, on which
 * document, for whom, and the exact request, then approves (POST /agent-actions/{id}/approve: the act
 * runs now, as them) or rejects it with an optional reason. The server decides who may: an agent's
 * key, or the key that proposed it, is refused (403), and an action they do not reach is 404.
 */
export async function showApproval(
  main: HTMLElement,
  api: Api,
  id: string,
  leave: HTMLElement,
): Promise<void> {
  const action = await api.json<AgentAction>('GET', `/agent-actions/${encodeURIComponent(id)}`);
  let title = action.documentId;
  try {
    const found = await api.json<{ results: DocumentView[] }>(
      'GET',
      `/documents/${encodeURIComponent(action.documentId)}`,
    );
    title = found.results[0]?.documentTitle ?? title;
  } catch {
    // The approver may decide without reading the document (an administrator): its id names it.
  }
  const heading = h('h1', { id: uid('approval') }, pt('approve.title'));
  const facts = h(
    'dl',
    { class: 'approval-facts' },
    h('dt', {}, pt('approve.document')),
    h('dd', {}, title),
    h('dt', {}, pt('approve.act')),
    h('dd', { 'data-act': '' }, actText(action)),
    h('dt', {}, pt('approve.by')),
    h(
      'dd',
      {},
      pt('approve.byValue', { user: action.createdBy, key: action.keyId, at: when(action.createdAt) }),
    ),
    h('dt', {}, pt('approve.expires')),
    h('dd', {}, when(action.expiresAt)),
  );
  const exact = h(
    'details',
    { class: 'approval-request' },
    h('summary', {}, pt('approve.request')),
    h('pre', {}, JSON.stringify(action.request, null, 2)),
  );
  const outcome = h('div', { class: 'form-feedback', role: 'status' });
  const decided = (state: AgentAction['state'], by: string | null) =>
    messageBox(
      state === 'executed' ? 'success' : 'info',
      pt(`approve.state.${state}` satisfies PrepareKey, { by: by ?? '' }),
    );

  const controls = h('div', { class: 'approval-controls' });
  if (action.state === 'pending') {
    const approve = h('button', { type: 'button', class: 'button button--primary' }, pt('approve.approve'));
    const reason = h('textarea', { class: 'input', rows: 2, maxlength: 1000 });
    const reject = h('button', { type: 'submit', class: 'button button--secondary' }, pt('approve.reject'));
    const rejectForm = h(
      'form',
      { class: 'form', novalidate: true },
      field(pt('approve.reason'), reason),
      reject,
    );
    const decide = (path: 'approve' | 'reject', body?: unknown) => {
      approve.disabled = true;
      reject.disabled = true;
      outcome.replaceChildren(h('p', { class: 'loading' }, pt('approve.working')));
      void api
        .json<AgentAction>('POST', `/agent-actions/${encodeURIComponent(id)}/${path}`, body ?? {})
        .then((done) => {
          controls.replaceChildren();
          outcome.replaceChildren(decided(done.state, done.decidedBy));
        })
        .catch((error: unknown) => {
          approve.disabled = false;
          reject.disabled = false;
          const text =
            error instanceof ApiFailure && error.status === 403 ? pt('approve.forbidden') : apiMessage(error);
          outcome.replaceChildren(messageBox('error', text));
        });
    };
    approve.addEventListener('click', () => decide('approve'));
    rejectForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const text = reason.value.trim();
      decide('reject', text ? { reason: text } : {});
    });
    controls.append(h('p', {}, pt('approve.explain')), approve, rejectForm);
  } else outcome.replaceChildren(decided(action.state, action.decidedBy));

  main.replaceChildren(
    h('nav', { class: 'session-bar', 'aria-label': pt('approve.title') }, leave),
    h(
      'section',
      { class: 'card prepare-card', 'aria-labelledby': heading.id },
      heading,
      facts,
      exact,
      controls,
      outcome,
    ),
  );
  main.dataset.view = 'approval';
  focusHeading(heading);
}

import '../styles.css';
import './prepare.css';
import { Api, ApiFailure, type DocumentView } from '../api.js';
import { renderChrome } from '../chrome.js';
import { field, focusHeading, h, messageBox, uid } from '../dom.js';
import { pickLanguage, setLanguage, t } from '../i18n.js';
import { apiMessage, PrepareEditor } from './editor.js';
import { showApproval } from './approval.js';
import { showSignIn, showTotp } from './sign-in.js';
import { pt } from './texts.js';

/**
 * The prepare page (issue 40): a sender opens one of their documents (from their list, by id, or by
 * uploading a PDF), draws each recipient's fields on its pages, and sends the share (POST /share) or
 * copies its exact body. `/prepare`: the choice of document; `/prepare/<documentId>`: the editor.
 *
 * Every call is the public API, as the sender: with the session cookie of the sign-in form (the
 * signer page's, POST /login `cookie: true`), or with an API key pasted here, sent in the
 * `Authorization` header and kept in sessionStorage for this tab only (never in an address).
 * `/approve/<id>` is the same page deciding what an AI agent asked to do (approval.ts, issue 42).
 */

const main = document.getElementById('main') as HTMLElement;
const KEY_STORAGE = 'signery.prepare.apiKey';
let rerender: () => void = () => undefined;

function storedKey(): string | undefined {
  try {
    return sessionStorage.getItem(KEY_STORAGE) ?? undefined;
  } catch {
    return undefined;
  }
}

function storeKey(key: string | undefined): void {
  try {
    if (key) sessionStorage.setItem(KEY_STORAGE, key);
    else sessionStorage.removeItem(KEY_STORAGE);
  } catch {
    // No storage: the key lasts as long as the page.
  }
}

/** `/approve/<id>`: the approval page the mail to an agent key's owner links to (approval.ts). */
function approvalIdOfAddress(): string | undefined {
  const match = /^\/approve\/([^/]+)\/?$/.exec(window.location.pathname);
  return match?.[1] ? decodeURIComponent(match[1]) : undefined;
}

function documentIdOfAddress(): string | undefined {
  const match = /^\/prepare\/([^/]+)\/?$/.exec(window.location.pathname);
  return match?.[1] ? decodeURIComponent(match[1]) : undefined;
}

function chrome(): void {
  renderChrome(pt('title'), () => {
    chrome();
    rerender();
  });
}

function loading(): void {
  main.replaceChildren(h('p', { class: 'loading', role: 'status' }, t('loading')));
  main.dataset.view = 'loading';
}

function fatal(error: unknown): void {
  main.replaceChildren(messageBox('error', apiMessage(error)));
  main.dataset.view = 'error';
}

/** The signed-in sender's way out: signing out (a session), or forgetting the key (an API key). */
function leaveButton(api: Api, withKey: boolean): HTMLButtonElement {
  const button = h(
    'button',
    { type: 'button', class: 'button button--secondary' },
    withKey ? pt('key.forget') : t('session.signOut'),
  );
  button.addEventListener('click', () => {
    button.disabled = true;
    storeKey(undefined);
    void (withKey ? Promise.resolve() : api.logOut().catch(() => undefined)).then(() =>
      window.location.assign('/prepare'),
    );
  });
  return button;
}

/** The sign-in form (a session), and beside it the API key form. */
function signIn(note?: string): void {
  const sessionApi = new Api({ kind: 'session' });
  rerender = () =>
    showSignIn(
      main,
      sessionApi,
      {
        onSession: (unlocked) => {
          if (unlocked) void start();
          else showTotp(main, sessionApi, () => void start());
        },
        onKey: (key) => {
          storeKey(key);
          void start();
        },
      },
      note,
    );
  rerender();
}

/** The sender's documents, one by id, or a PDF to upload: each leads to /prepare/<id>. */
async function showDocuments(api: Api, leave: HTMLElement): Promise<void> {
  const found = await api.json<{ results: DocumentView[] }>('POST', '/search', {
    kind: 'document',
    size: 50,
    sort: 'modifyDate',
  });
  const render = () => {
    const heading = h('h1', {}, pt('title'));
    const list = found.results.length
      ? h(
          'ul',
          { class: 'inbox' },
          ...found.results.map((doc) =>
            h(
              'li',
              { class: 'inbox-item' },
              h('a', { href: `/prepare/${encodeURIComponent(doc.documentId)}` }, doc.documentTitle),
              doc.pdfFile?.pages
                ? h('span', { class: 'inbox-meta' }, ` · ${pt('open.pages', { n: doc.pdfFile.pages })}`)
                : null,
            ),
          ),
        )
      : h('p', {}, pt('open.empty'));

    const id = h('input', { type: 'text', class: 'input', autocomplete: 'off', spellcheck: 'false' });
    const idFeedback = h('div', { class: 'form-feedback' });
    const byId = h(
      'form',
      { class: 'form prepare-inline-form', novalidate: true },
      field(pt('open.id'), id),
      idFeedback,
      h('button', { type: 'submit', class: 'button button--secondary' }, pt('open.idSubmit')),
    );
    byId.addEventListener('submit', (event) => {
      event.preventDefault();
      const value = id.value.trim();
      if (!value) {
        idFeedback.replaceChildren(messageBox('error', pt('open.idEmpty')));
        id.focus();
        return;
      }
      window.location.assign(`/prepare/${encodeURIComponent(value)}`);
    });

    const file = h('input', { type: 'file', class: 'input', accept: 'application/pdf,.pdf' });
    const title = h('input', { type: 'text', class: 'input', maxlength: 500 });
    const uploadFeedback = h('div', { class: 'form-feedback' });
    const submit = h('button', { type: 'submit', class: 'button button--primary' }, pt('open.uploadSubmit'));
    const upload = h(
      'form',
      { class: 'form', novalidate: true },
      field(pt('open.file'), file),
      field(pt('open.docTitle'), title),
      uploadFeedback,
      submit,
    );
    upload.addEventListener('submit', (event) => {
      event.preventDefault();
      const chosen = file.files?.[0];
      if (!chosen || !/\.pdf$/i.test(chosen.name)) {
        uploadFeedback.replaceChildren(messageBox('error', pt('open.notPdf')));
        file.focus();
        return;
      }
      submit.disabled = true;
      uploadFeedback.replaceChildren(messageBox('info', pt('open.uploading')));
      void (async () => {
        try {
          const uploaded = await api.upload('/files/saveFile', chosen, chosen.name);
          const created = await api.json<{ results: DocumentView[] }>('POST', '/documents', {
            body: {
              documentTitle: title.value.trim() || chosen.name.replace(/\.pdf$/i, ''),
              pdfFile: { content: uploaded.file.id },
            },
          });
          const documentId = created.results[0]?.documentId;
          if (documentId) window.location.assign(`/prepare/${encodeURIComponent(documentId)}`);
        } catch (error) {
          submit.disabled = false;
          uploadFeedback.replaceChildren(messageBox('error', apiMessage(error)));
        }
      })();
    });

    const section = (titleText: string, ...content: HTMLElement[]) => {
      const h2 = h('h2', { id: uid('open') }, titleText);
      return h('section', { class: 'card prepare-card', 'aria-labelledby': h2.id }, h2, ...content);
    };
    main.replaceChildren(
      h('nav', { class: 'session-bar', 'aria-label': pt('title') }, leave),
      h('div', { class: 'prepare-head' }, heading, h('p', {}, pt('open.intro'))),
      section(pt('open.upload'), upload),
      section(pt('open.list'), list),
      section(pt('open.byId'), byId),
    );
    main.dataset.view = 'documents';
    focusHeading(heading);
  };
  rerender = render;
  render();
}

async function start(): Promise<void> {
  loading();
  const key = storedKey();
  const api = key ? new Api({ kind: 'key', token: key }) : new Api({ kind: 'session' });
  try {
    if (!key) {
      const state = await api.loginState();
      if (!state.logged) return signIn();
      if (state.isUnlocked === false) {
        rerender = () => showTotp(main, api, () => void start());
        return rerender();
      }
    }
    const leave = leaveButton(api, Boolean(key));
    const approvalId = approvalIdOfAddress();
    if (approvalId) {
      rerender = () => void showApproval(main, api, approvalId, leave).catch(fatal);
      return await showApproval(main, api, approvalId, leave);
    }
    const documentId = documentIdOfAddress();
    if (!documentId) return await showDocuments(api, leave);
    const editor = new PrepareEditor(main, api, documentId, leave);
    rerender = () => editor.render();
    await editor.open();
  } catch (error) {
    if (key && error instanceof ApiFailure && error.status === 401) {
      storeKey(undefined);
      return signIn(pt('key.rejected'));
    }
    if (!key && error instanceof ApiFailure && error.status === 401) return signIn();
    fatal(error);
  }
}

setLanguage(
  pickLanguage(new URLSearchParams(window.location.search).get('lang') ?? undefined, navigator.languages),
);
chrome();
void start();

import './styles.css';
import { Api, ApiFailure, type DocumentView, type IdentityProvider, type ShareProviders } from './api.js';
import {
  showIdentity,
  showInbox,
  showInvalidLink,
  showLogin,
  showSignedCopy,
  showTotp,
  showUnlock,
  type Note,
} from './access-views.js';
import { renderChrome } from './chrome.js';
import { h, messageBox } from './dom.js';
import { pickLanguage, setLanguage, supported, t, language } from './i18n.js';
import { sessionStoreFor } from './recipient-session.js';
import { describeError, SigningPage } from './signing-view.js';
import { notifyEmbedder } from './notify-embedder.js';
import { loadViewer, viewerCodeSeen } from './viewer-code.js';

/**
 * The signer's page. `/s/<token>`: an external recipient's share link (Contract). `/sign`: an internal
 * user's pending documents, `/sign/<documentId>`: one of them. The link token is read once from the
 * address and kept in memory (api.ts); nothing here writes it anywhere. The recipient session that
 * unlocking answers is kept for the tab only (recipient-session.ts).
 */

const main = document.getElementById('main') as HTMLElement;
let rerender: () => void = () => undefined;

function route(): { kind: 'share'; token: string } | { kind: 'inbox' } | { kind: 'document'; id: string } {
  const path = window.location.pathname;
  const share = /^\/s\/([^/]+)\/?$/.exec(path);
  if (share?.[1]) return { kind: 'share', token: decodeURIComponent(share[1]) };
  const doc = /^\/sign\/([^/]+)\/?$/.exec(path);
  if (doc?.[1]) return { kind: 'document', id: decodeURIComponent(doc[1]) };
  return { kind: 'inbox' };
}

/**
 * A document's address will show a PDF. A returning visitor has the viewer's code (pdf.js and its
 * worker, the bulk of the page) in the cache: it starts loading now, beside the calls that read the
 * document. A new visitor first gets the server's image of the first page (its code comes after it,
 * signing-view.ts): on a slow phone the two would otherwise share the connection.
 */
const viewerCached = route().kind === 'inbox' || viewerCodeSeen();
if (viewerCached && route().kind !== 'inbox') {
  loadViewer().catch(() => {
    // Loaded again when the document is shown, where a failure is reported.
  });
}

function chrome(): void {
  renderChrome(t('appName'), () => {
    chrome();
    rerender();
  });
}

function loading(): void {
  main.replaceChildren(h('p', { class: 'loading', role: 'status' }, t('loading')));
  main.dataset.view = 'loading';
}

function fatal(error: unknown): void {
  main.replaceChildren(messageBox('error', describeError(error)));
  main.dataset.view = 'error';
  notifyEmbedder(
    'error',
    {},
    {
      code: error instanceof ApiFailure ? error.code : 'UNAVAILABLE',
      message: 'The document could not be shown',
    },
  );
}

/** A link (or its recipient session) that opens nothing: said on the page, and to an embedding site. */
function linkFailed(error?: unknown): void {
  showInvalidLink(main);
  notifyEmbedder(
    'error',
    {},
    {
      code: error instanceof ApiFailure ? error.code : 'UNAUTHENTICATED',
      message: 'This link does not open the document (any more)',
    },
  );
}

/** The share's language, when the page speaks it (the share decides, as for its e-mails). */
function followShareLanguage(doc: DocumentView): void {
  const wanted = supported(doc.share?.language);
  if (wanted && wanted !== language()) {
    setLanguage(wanted);
    chrome();
  }
}

async function openDocument(
  api: Api,
  doc: DocumentView,
  documentId: string | undefined,
  focusTitle: boolean,
  onInvalid: () => void = () => linkFailed(),
  preview?: Promise<string | undefined>,
) {
  followShareLanguage(doc);
  // A signed-in user's way back to their list, and out.
  const back = documentId
    ? h(
        'nav',
        { class: 'session-bar', 'aria-label': t('inbox.title') },
        h('a', { href: '/sign', class: 'back-link' }, `← ${t('inbox.back')}`),
        signOutButton(api),
      )
    : undefined;
  const page = new SigningPage(
    main,
    {
      api,
      ...(documentId ? { documentId } : {}),
      ...(back ? { back } : {}),
      ...(preview ? { preview } : {}),
      onInvalid,
    },
    doc,
  );
  rerender = () => void page.render();
  await page.render(focusTitle ? 'title' : undefined);
  notifyEmbedder('ready', { documentId: doc.documentId, shareId: doc.share?.shareId });
}

// --- identity providers (GET /share/oidc/:provider leaves the page and comes back to it) ---

/** Remembers, for this tab only, which provider a sign-in was started with: never the token. */
const SIGN_IN_KEY = 'signery.identitySignIn';
const SIGN_IN_TTL_MS = 15 * 60_000;

interface StartedSignIn {
  provider: string;
  label: string;
  at: number;
}

function startSignIn(api: Api, provider: IdentityProvider): void {
  try {
    const started: StartedSignIn = { provider: provider.name, label: provider.label, at: Date.now() };
    sessionStorage.setItem(SIGN_IN_KEY, JSON.stringify(started));
  } catch {
    // No storage: the page just cannot say afterwards that the sign-in did not succeed.
  }
  // Back to this very page, without any fragment: the server adds `#isUnlocked=…`.
  const here = `${window.location.origin}${window.location.pathname}${window.location.search}`;
  window.location.assign(api.identityStartUrl(provider, here));
}

/** The sign-in this tab started (and forgets it): the provider's answer is about to be read. */
function takeStartedSignIn(): StartedSignIn | undefined {
  try {
    const raw = sessionStorage.getItem(SIGN_IN_KEY);
    sessionStorage.removeItem(SIGN_IN_KEY);
    const started = raw ? (JSON.parse(raw) as StartedSignIn) : undefined;
    return started && Date.now() - started.at < SIGN_IN_TTL_MS ? started : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The server's answer after an identity provider's sign-in, `#isUnlocked=true|false&token=…` (the
 * recipient session it opened): read once, and the fragment cleared so that a reload, a bookmark or
 * the history does not keep it.
 */
function takeSignInResult(): { isUnlocked: boolean; session: string | undefined } | undefined {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  const value = fragment.get('isUnlocked');
  if (value === null) return undefined;
  history.replaceState(history.state, '', `${window.location.pathname}${window.location.search}`);
  return { isUnlocked: value === 'true', session: fragment.get('token') ?? undefined };
}

async function startShare(token: string): Promise<void> {
  const sessions = await sessionStoreFor(token);
  const api = new Api(
    { kind: 'share', token },
    { session: sessions.load(), onSession: (session) => sessions.save(session) },
  );
  const signIn = takeSignInResult();
  if (signIn?.session) api.useSession(signIn.session);
  const result = signIn?.isUnlocked;
  // A sign-in started here that never came back: the server answered the provider's return with an
  // error (an identity that is not the share's, a refusal) and the recipient came back to the link.
  let started = takeStartedSignIn();
  // Back with the identity proven, but a password or code still owed.
  let stillLocked = result === false;

  const showLocked = async (): Promise<void> => {
    let state: ShareProviders = { providers: [], isUnlocked: false };
    try {
      state = await api.identityProviders();
    } catch {
      // A server without identity providers for links: the password and the code, as always.
    }
    const labelOf = (name: string) => state.providers.find((p) => p.name === name)?.label ?? name;
    const verified = state.identityVerified;
    let note: Note | undefined;
    if (state.providers.length > 0 && !verified) {
      if (started) note = { kind: 'error', key: 'identity.failed', values: { provider: started.label } };
      rerender = () => showIdentity(main, state.providers, (p) => startSignIn(api, p), note);
    } else {
      if (verified && (stillLocked || started))
        note = {
          kind: 'success',
          key: 'identity.verified',
          values: { provider: labelOf(verified.provider) },
        };
      rerender = () =>
        showUnlock(main, api, () => void open(true), {
          ...(note ? { note } : {}),
          ...(state.unlockWith ? { unlockWith: state.unlockWith } : {}),
          ...(state.documentTitle
            ? { document: { title: state.documentTitle, sender: state.sharedBy ?? '' } }
            : {}),
          onIdentityRequired: () => void open(false),
        });
    }
    // Said once: after this, the screens are the usual ones.
    started = undefined;
    stillLocked = false;
    rerender();
  };

  /**
   * The recipient acted on the share (GET /share/document answers 403 to their link or session): the
   * download of what they signed, once they have unlocked again when the share is protected.
   */
  const showSigned = async (): Promise<void> => {
    const state = await api.identityProviders();
    if (state.isUnlocked) {
      rerender = () => showSignedCopy(main, api);
    } else {
      rerender = () =>
        showUnlock(main, api, () => void open(true), {
          note: { kind: 'info', key: 'done.unlock' },
          ...(state.unlockWith ? { unlockWith: state.unlockWith } : {}),
        });
    }
    rerender();
  };

  // A recipient session ends an hour after its last use or with the share: back to the link, which
  // asks to unlock again (or says the share is over).
  const sessionEnded = (): boolean => {
    if (!api.dropSession()) return false;
    void open(false);
    return true;
  };
  const open = async (focusTitle: boolean): Promise<void> => {
    loading();
    try {
      // Asked for beside the document, so that it shows before the viewer's code has arrived.
      const preview = viewerCached ? undefined : api.preview();
      const doc = (await api.document()).results[0];
      if (!doc) throw new Error('no document');
      await openDocument(
        api,
        doc,
        undefined,
        focusTitle,
        () => {
          if (!sessionEnded()) linkFailed();
        },
        preview,
      );
    } catch (error) {
      if (error instanceof ApiFailure && error.code === 'MFA_REQUIRED') await showLocked();
      else if (error instanceof ApiFailure && error.status === 403) await showSigned().catch(fatal);
      else if (error instanceof ApiFailure && error.status === 401 && sessionEnded()) return;
      else if (error instanceof ApiFailure && (error.status === 401 || error.status === 404)) {
        rerender = () => showInvalidLink(main);
        linkFailed(error);
      } else fatal(error);
    }
  };
  // Back from a provider: the recipient took a step, so keyboard users start at the title.
  await open(result !== undefined);
}

/** Ends a signed-in user's session, then shows the sign-in form. */
function signOutButton(api: Api): HTMLElement {
  const button = h('button', { type: 'button', class: 'button button--secondary' }, t('session.signOut'));
  button.addEventListener('click', () => {
    button.setAttribute('disabled', '');
    void api
      .logOut()
      .catch(() => undefined)
      .then(() => window.location.assign('/sign'));
  });
  return button;
}

async function startSession(documentId?: string): Promise<void> {
  const api = new Api({ kind: 'session' });
  const proceed = async (): Promise<void> => {
    loading();
    try {
      const state = await api.loginState();
      if (!state.logged) {
        rerender = () => showLogin(main, api, (unlocked) => void (unlocked ? proceed() : showTotpStep()));
        rerender();
        return;
      }
      if (state.isUnlocked === false) return showTotpStep();
      if (!documentId) {
        const [inbox, done] = await Promise.all([api.inbox(), api.inbox('done')]);
        rerender = () => showInbox(main, inbox.results, done.results, signOutButton(api));
        rerender();
        return;
      }
      const preview = viewerCached ? undefined : api.preview(documentId);
      const doc = (await api.document(documentId)).results[0];
      if (!doc) throw new Error('no document');
      await openDocument(api, doc, documentId, true, undefined, preview);
    } catch (error) {
      fatal(error);
    }
  };
  const showTotpStep = () => {
    rerender = () => showTotp(main, api, () => void proceed());
    rerender();
  };
  await proceed();
}

// The page is not kept in the back-forward cache (no-store), but should a browser restore it anyway
// (after leaving for an identity provider), it starts over rather than show a page left half-way.
window.addEventListener('pageshow', (event) => {
  if (event.persisted) window.location.reload();
});

setLanguage(
  pickLanguage(new URLSearchParams(window.location.search).get('lang') ?? undefined, navigator.languages),
);
chrome();
const target = route();
void (target.kind === 'share'
  ? startShare(target.token)
  : startSession(target.kind === 'document' ? target.id : undefined));

import { ApiFailure, type Api, type IdentityProvider, type ShareView, type UnlockWith } from './api.js';
import { field, focusHeading, h, messageBox } from './dom.js';
import { t, type MessageKey } from './i18n.js';
import { describeError } from './signing-view.js';

/** A message shown at the top of a screen, kept as a key so it follows a change of language. */
export interface Note {
  kind: 'error' | 'info' | 'success';
  key: MessageKey;
  values?: Record<string, string>;
}

const noteBox = (note: Note | undefined) => (note ? [messageBox(note.kind, t(note.key, note.values))] : []);

/**
 * A titled card with a form: the unlock, sign-in and verification screens. Focus goes to the heading,
 * or to `focus` (the unlock screen's first field: the one thing to do there).
 */
function card(
  main: HTMLElement,
  view: string,
  title: string,
  ...content: (HTMLElement | { focus: HTMLElement })[]
): HTMLElement {
  const heading = h('h1', { id: `${view}-title` }, title);
  const shown = content.filter((c): c is HTMLElement => c instanceof HTMLElement);
  const focus = content.find((c): c is { focus: HTMLElement } => !(c instanceof HTMLElement));
  const section = h('section', { class: 'card', 'aria-labelledby': heading.id }, heading, ...shown);
  main.replaceChildren(section);
  main.dataset.view = view;
  if (focus) focus.focus.focus();
  else focusHeading(heading);
  return section;
}

/** What a share link shows when it is not valid (unknown token, 401). */
export function showInvalidLink(main: HTMLElement): void {
  card(main, 'invalid', t('invalid.title'), h('p', {}, t('invalid.body')));
}

/**
 * A recipient who signed, back on their link (issue 40, 1): what they signed to download (GET
 * /share/signed: the sealed final copy once the document completed), for RECIPIENT_DOWNLOAD_DAYS.
 */
export function showSignedCopy(main: HTMLElement, api: Api): void {
  const feedback = h('div', { class: 'form-feedback' });
  const button = h('button', { type: 'button', class: 'button button--primary' }, t('action.download'));
  button.addEventListener('click', () => {
    void (async () => {
      try {
        const bytes = await api.signedCopy();
        const url = URL.createObjectURL(new Blob([bytes], { type: 'application/pdf' }));
        const link = h('a', { href: url, download: 'signed-document.pdf', hidden: true });
        document.body.append(link);
        link.click();
        link.remove();
        window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
        feedback.replaceChildren();
      } catch (error) {
        feedback.replaceChildren(messageBox('error', describeError(error)));
      }
    })();
  });
  card(main, 'signed', t('done.title'), h('p', {}, t('done.body')), feedback, button);
}

/**
 * A share whose recipient must first prove who they are at an identity provider (GET /share/oidc):
 * one button per provider, each leaving for the provider's sign-in, which comes back to this page.
 */
export function showIdentity(
  main: HTMLElement,
  providers: IdentityProvider[],
  onStart: (provider: IdentityProvider) => void,
  note?: Note,
): void {
  const list = h('div', { class: 'provider-list' });
  for (const provider of providers) {
    const button = h(
      'button',
      { type: 'button', class: 'button button--primary', 'data-provider': provider.name },
      t('identity.continue', { provider: provider.label }),
    );
    button.addEventListener('click', () => {
      // Leaving the page: a second press would start a second sign-in.
      for (const b of list.querySelectorAll('button')) b.disabled = true;
      main.setAttribute('aria-busy', 'true');
      onStart(provider);
    });
    list.append(button);
  }
  card(main, 'identity', t('unlock.title'), ...noteBox(note), h('p', {}, t('identity.intro')), list);
}

/**
 * Unlocking a protected share (Contract: POST /share/otp, POST /share/unlock): the password and the
 * one-time code the share has (`unlockWith`, from GET /share/oidc), and only those; both when the
 * server did not say. The server sends the code where the share says (SMS to its phone, else e-mail).
 * `onIdentityRequired`: the server wants an identity provider's sign-in first (403 MFA_REQUIRED).
 */
export function showUnlock(
  main: HTMLElement,
  api: Api,
  onUnlocked: () => void,
  options: {
    note?: Note;
    onIdentityRequired?: () => void;
    unlockWith?: UnlockWith;
    /** What the invitation named (GET /share/oidc): the document and its sender. */
    document?: { title: string; sender: string };
  } = {},
): void {
  const told = options.unlockWith;
  const asks = told && (told.password || told.code) ? told : { password: true, code: 'email' };
  const password = h('input', {
    type: 'password',
    class: 'input',
    autocomplete: 'current-password',
    maxlength: 200,
  });
  const code = h('input', {
    type: 'text',
    class: 'input',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    maxlength: 20,
  });
  const feedback = h('div', { class: 'form-feedback' });
  const first = asks.password ? password : code;
  const send = async () => {
    try {
      const { channel } = await api.sendCode();
      feedback.replaceChildren(
        messageBox('info', t(channel === 'sms' ? 'unlock.sentSms' : 'unlock.sentEmail')),
      );
      code.focus();
    } catch (error) {
      feedback.replaceChildren(messageBox('error', describeError(error)));
    }
  };
  const form = h(
    'form',
    { class: 'form', novalidate: true },
    ...(asks.password ? [field(t('unlock.password'), password)] : []),
    ...(asks.code
      ? [
          h(
            'fieldset',
            { class: 'fieldset' },
            h('legend', {}, t('unlock.codeGroup')),
            h(
              'div',
              { class: 'button-row' },
              h(
                'button',
                { type: 'button', class: 'button button--secondary', onclick: () => void send() },
                t('unlock.send'),
              ),
            ),
            field(t('unlock.code'), code),
          ),
        ]
      : []),
    feedback,
    h('button', { type: 'submit', class: 'button button--primary' }, t('unlock.submit')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const secret = {
      ...(password.value ? { password: password.value } : {}),
      ...(code.value.trim() ? { otp: code.value.trim() } : {}),
    };
    if (!secret.password && !secret.otp) {
      feedback.replaceChildren(messageBox('error', t('unlock.empty')));
      first.focus();
      return;
    }
    void (async () => {
      try {
        await api.unlock(secret);
        onUnlocked();
      } catch (error) {
        if (error instanceof ApiFailure && error.code === 'MFA_REQUIRED' && options.onIdentityRequired) {
          options.onIdentityRequired();
          return;
        }
        const key: MessageKey | undefined =
          error instanceof ApiFailure
            ? error.status === 429
              ? 'unlock.tooMany'
              : error.status === 401
                ? 'unlock.failed'
                : undefined
            : undefined;
        feedback.replaceChildren(messageBox('error', key ? t(key) : describeError(error)));
        password.value = '';
        code.value = '';
        first.focus();
      }
    })();
  });
  // The share's own protections when the server said which; otherwise a text that covers both.
  const intro: MessageKey = !options.unlockWith
    ? 'unlock.intro'
    : asks.password && asks.code
      ? 'unlock.introBoth'
      : asks.password
        ? 'unlock.introPassword'
        : 'unlock.introCode';
  // The document and its sender, as the invitation named them (issue 40: the unlock screen said
  // neither); focus in the first field, where the recipient starts.
  const named = options.document?.title
    ? [h('p', { class: 'unlock-document' }, t('unlock.document', options.document))]
    : [];
  card(main, 'unlock', t('unlock.title'), ...named, ...noteBox(options.note), h('p', {}, t(intro)), form, {
    focus: first,
  });
}

/** Internal users: sign in with the session cookie (POST /login `cookie: true`). */
export function showLogin(main: HTMLElement, api: Api, onLoggedIn: (unlocked: boolean) => void): void {
  const name = h('input', { type: 'text', class: 'input', autocomplete: 'username', maxlength: 320 });
  const password = h('input', {
    type: 'password',
    class: 'input',
    autocomplete: 'current-password',
    maxlength: 1024,
  });
  const feedback = h('div', { class: 'form-feedback' });
  const form = h(
    'form',
    { class: 'form', novalidate: true },
    field(t('login.name'), name),
    field(t('login.password'), password),
    feedback,
    h('button', { type: 'submit', class: 'button button--primary' }, t('login.submit')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      try {
        const state = await api.logIn(name.value.trim(), password.value);
        onLoggedIn(state.isUnlocked !== false);
      } catch (error) {
        const refused = error instanceof ApiFailure && (error.status === 401 || error.status === 400);
        feedback.replaceChildren(messageBox('error', refused ? t('login.failed') : describeError(error)));
        password.value = '';
        password.focus();
      }
    })();
  });
  card(main, 'login', t('login.title'), form);
}

/** Internal users with MFA: the session stays locked until a TOTP code (POST /login/totp). */
export function showTotp(main: HTMLElement, api: Api, onUnlocked: () => void): void {
  const code = h('input', {
    type: 'text',
    class: 'input',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    maxlength: 6,
  });
  const feedback = h('div', { class: 'form-feedback' });
  const form = h(
    'form',
    { class: 'form', novalidate: true },
    field(t('totp.code'), code),
    feedback,
    h('button', { type: 'submit', class: 'button button--primary' }, t('totp.submit')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void api.totp(code.value.trim()).then(onUnlocked, (error: unknown) => {
      feedback.replaceChildren(messageBox('error', describeError(error)));
      code.value = '';
      code.focus();
    });
  });
  card(main, 'totp', t('totp.title'), form);
}

/** A list of shares, each a link to its document page with a line saying what it is. */
function shareList(shares: ShareView[], meta: (share: ShareView) => string): HTMLElement {
  const list = h('ul', { class: 'inbox' });
  for (const share of shares) {
    list.append(
      h(
        'li',
        { class: 'inbox-item' },
        h(
          'a',
          { href: `/sign/${encodeURIComponent(share.sharedObjectEsId)}` },
          share.documentTitle ?? share.sharedObjectEsId,
        ),
        h('span', { class: 'inbox-meta' }, meta(share)),
      ),
    );
  }
  return list;
}

/**
 * Internal users' pending actions (GET /inbox), then what they acted on (GET /inbox?state=done):
 * completed documents among them, to read and download again.
 */
export function showInbox(
  main: HTMLElement,
  shares: ShareView[],
  done: ShareView[] = [],
  signOut?: HTMLElement,
): void {
  const pending = shareList(
    shares,
    (share) =>
      `${t(`purpose.${share.shareType}` as MessageKey)} · ${share.sharedByDisplayName ?? share.sharedBy ?? ''}${share.status === 'waiting' ? ` · ${t('inbox.notYet')}` : ''}`,
  );
  const round: Record<string, MessageKey> = {
    completed: 'inbox.completed',
    inprogress: 'inbox.othersPending',
  };
  const acted = shareList(done, (share) => {
    const state = round[share.documentShareState ?? ''];
    return [share.sharedByDisplayName ?? share.sharedBy ?? '', ...(state ? [t(state)] : [])].join(' · ');
  });
  const doneHeading = h('h2', { id: 'inbox-done' }, t('inbox.done'));
  card(
    main,
    'inbox',
    t('inbox.title'),
    shares.length > 0 ? pending : h('p', {}, t('inbox.empty')),
    ...(done.length > 0
      ? [h('section', { 'aria-labelledby': doneHeading.id, class: 'inbox-done' }, doneHeading, acted)]
      : []),
    ...(signOut ? [h('p', { class: 'session-bar' }, signOut)] : []),
  );
}

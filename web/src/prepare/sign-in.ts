import { ApiFailure, type Api } from '../api.js';
import { field, focusHeading, h, messageBox, uid } from '../dom.js';
import { t } from '../i18n.js';
import { apiMessage } from './editor.js';
import { pt } from './texts.js';

/**
 * How a sender signs in on the prepare page: the signer page's sign-in (POST /login with
 * `cookie: true`, then POST /login/totp for an account with two-step verification, i18n.ts's own
 * words), or an API key. The forms are written here rather than imported from access-views.ts: that
 * module brings the whole signing view with it, which would then be split off the signer page's own
 * script into a chunk both pages load, one more request on a signer's slow phone (issue 25).
 */

function card(main: HTMLElement, title: string, level: 'h1' | 'h2', ...content: HTMLElement[]): HTMLElement {
  const heading = h(level, { id: uid('card') }, title);
  return h('section', { class: 'card', 'aria-labelledby': heading.id }, heading, ...content);
}

function form(submitText: string, primary: boolean, ...fields: HTMLElement[]) {
  const feedback = h('div', { class: 'form-feedback' });
  const element = h(
    'form',
    { class: 'form', novalidate: true },
    ...fields,
    feedback,
    h(
      'button',
      { type: 'submit', class: `button ${primary ? 'button--primary' : 'button--secondary'}` },
      submitText,
    ),
  );
  return { element, fail: (text: string) => feedback.replaceChildren(messageBox('error', text)) };
}

/**
 * The sign-in form and, beside it, the API key form. `onSession`: signed in with a session (locked
 * when a TOTP code is still owed); `onKey`: a key to use.
 */
export function showSignIn(
  main: HTMLElement,
  api: Api,
  handlers: { onSession: (unlocked: boolean) => void; onKey: (key: string) => void },
  note?: string,
): void {
  const name = h('input', { type: 'text', class: 'input', autocomplete: 'username', maxlength: 320 });
  const password = h('input', {
    type: 'password',
    class: 'input',
    autocomplete: 'current-password',
    maxlength: 1024,
  });
  const login = form(
    t('login.submit'),
    true,
    field(t('login.name'), name),
    field(t('login.password'), password),
  );
  login.element.addEventListener('submit', (event) => {
    event.preventDefault();
    void (async () => {
      try {
        const state = await api.logIn(name.value.trim(), password.value);
        handlers.onSession(state.isUnlocked !== false);
      } catch (error) {
        const refused = error instanceof ApiFailure && (error.status === 401 || error.status === 400);
        login.fail(refused ? t('login.failed') : apiMessage(error));
        password.value = '';
        password.focus();
      }
    })();
  });

  const key = h('input', { type: 'password', class: 'input', autocomplete: 'off', spellcheck: 'false' });
  const withKey = form(pt('key.submit'), false, field(pt('key.label'), key, pt('key.hint')));
  withKey.element.addEventListener('submit', (event) => {
    event.preventDefault();
    const value = key.value.trim();
    if (!value) {
      key.setAttribute('aria-invalid', 'true');
      withKey.fail(pt('key.empty'));
      key.focus();
      return;
    }
    handlers.onKey(value);
  });

  const signIn = card(
    main,
    t('login.title'),
    'h1',
    ...(note ? [messageBox('error', note)] : []),
    login.element,
  );
  main.replaceChildren(signIn, card(main, pt('key.title'), 'h2', withKey.element));
  main.dataset.view = 'login';
  focusHeading(signIn.querySelector('h1'));
}

/** The second step of an account with two-step verification (POST /login/totp). */
export function showTotp(main: HTMLElement, api: Api, onUnlocked: () => void): void {
  const code = h('input', {
    type: 'text',
    class: 'input',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    maxlength: 6,
  });
  const totp = form(t('totp.submit'), true, field(t('totp.code'), code));
  totp.element.addEventListener('submit', (event) => {
    event.preventDefault();
    void api
      .totp(code.value.trim())
      .then(onUnlocked)
      .catch((error: unknown) => {
        totp.fail(error instanceof ApiFailure && error.status < 500 ? t('login.failed') : apiMessage(error));
        code.focus();
      });
  });
  const section = card(main, t('totp.title'), 'h1', totp.element);
  main.replaceChildren(section);
  main.dataset.view = 'totp';
  focusHeading(section.querySelector('h1'));
}

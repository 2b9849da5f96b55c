import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import otplib from 'otplib';
import { ManualClock } from '../../src/base/clock.js';
import { ConfigError, loadConfig } from '../../src/base/config.js';
import { signInWithBrowser, startIdentityProvider } from '../helpers/oidc.js';
import { createUser, startServer, USER_PASSWORD } from '../helpers/server.js';
import { aUser } from '../helpers/people.js';
import { useServer, useStarted } from '../helpers/use-server.js';

// PUBLIC_URL stands for a proxy in front of the test server: the provider sends the browser there and
// the test moves the request onto the server's real address (its port is only known once it listens).
const PUBLIC_URL = 'http://signery.test';
const CALLBACK = `${PUBLIC_URL}/api/v1/login/oidc/corp/callback`;

const ACCOUNTS = [
  { id: 'alice', email: 'Alice@Example.test', emailVerified: true },
  { id: 'mfa', email: 'mfa@example.test', emailVerified: true },
  { id: 'unverified', email: 'bob@example.test', emailVerified: false },
  { id: 'stranger', email: 'stranger@example.test', emailVerified: true },
  { id: 'suspended', email: 'suspended@example.test', emailVerified: true },
  { id: 'twin', email: 'twin@example.test', emailVerified: true },
];

/** A fetch answer with its JSON body read (tests read arbitrary fields of it). */
async function answer(response: Response) {
  const text = await response.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const body: any = text ? JSON.parse(text) : undefined;
  return { status: response.status, headers: response.headers, body };
}

/** The identity provider of a describe, with this file's accounts and callback. */
const useIdentityProvider = () =>
  useStarted(
    'the identity provider',
    () => startIdentityProvider({ redirectUris: [CALLBACK], accounts: ACCOUNTS }),
    (idp) => idp.close(),
  );

describe('spec: Authentication 5, third-party sign-in through an OpenID Connect provider', () => {
  const clock = new ManualClock(new Date());
  const idp = useIdentityProvider();
  const server = useServer(() => ({
    clock,
    env: { PUBLIC_URL, OIDC_PROVIDERS: JSON.stringify([idp.entry('corp', { label: 'Corporate login' })]) },
  }));
  let aliceId: string;

  before(async () => {
    aliceId = await createUser(server, { name: 'alice', email: 'alice@example.test' });
    await createUser(server, { name: 'bob', email: 'bob@example.test' });
    await createUser(server, { name: 'twin-1', email: 'twin@example.test' });
    await createUser(server, { name: 'twin-2', email: 'twin@example.test' });
  });

  const start = (query = '') => `${server.url}/api/v1/login/oidc/corp${query}`;
  const browser = (accountId: string, query = '') =>
    signInWithBrowser({ start: start(query), accountId, publicUrl: PUBLIC_URL, serverUrl: server.url });
  const callback = async (url: URL, cookie?: string) =>
    answer(await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} }));
  /** The whole sign-in in one browser: the provider's answer for `accountId`, brought back to the callback. */
  const signIn = async (accountId: string, query = '') => {
    const flow = await browser(accountId, query);
    return callback(flow.callback, flow.cookie);
  };

  it('GET /login/oidc lists the configured providers by name and label', async () => {
    const response = await server.api('GET', '/login/oidc');
    assert.equal(response.status, 200);
    assert.deepEqual(response.body, { providers: [{ name: 'corp', label: 'Corporate login' }] });
  });

  it('the start redirects to the provider with state, nonce and a PKCE S256 challenge, and sets a binding cookie', async () => {
    const response = await fetch(start(), { redirect: 'manual' });
    assert.equal(response.status, 302);
    const location = new URL(response.headers.get('location') ?? '');
    assert.equal(location.origin, idp.issuer);
    assert.equal(location.searchParams.get('response_type'), 'code');
    assert.equal(location.searchParams.get('client_id'), idp.clientId);
    assert.equal(location.searchParams.get('redirect_uri'), CALLBACK);
    assert.equal(location.searchParams.get('code_challenge_method'), 'S256');
    assert.match(location.searchParams.get('code_challenge') ?? '', /^[\w-]{43}$/);
    assert.ok(location.searchParams.get('state'));
    assert.ok(location.searchParams.get('nonce'));
    assert.deepEqual(location.searchParams.get('scope')?.split(' ').sort(), ['email', 'openid', 'profile']);
    assert.ok(!location.href.includes(idp.clientSecret));
    const cookie = response.headers.getSetCookie().join('\n');
    assert.match(cookie, /signery_oidc=[^;]+;.*HttpOnly/i);
    assert.match(cookie, /Path=\/api\/v1\/login\/oidc/);
  });

  it('a verified e-mail signs in to the account with that e-mail and answers the Login response; the token works on GET /login', async () => {
    const response = await signIn('alice');
    assert.equal(response.status, 200);
    const body = response.body;
    assert.equal(body.logged, true);
    assert.equal(body.isUnlocked, true);
    assert.equal(body.tenant, 'default');
    assert.equal(body.user.name, 'alice');
    assert.equal(body.hasPassword, true);
    assert.ok(Array.isArray(body.rights));
    assert.ok('settings' in body);
    assert.match(body.token, /^[A-Za-z0-9_-]{43}$/);
    const me = await server.api('GET', '/login', { token: body.token });
    assert.equal(me.body.logged, true);
    assert.equal(me.body.isUnlocked, true);
    assert.equal(me.body.user.name, 'alice');

    const audit = await server.app.deps.db
      .selectFrom('audit_log')
      .selectAll()
      .where('activity_type', '=', 'logged')
      .where('object_id', '=', aliceId)
      .execute();
    assert.equal(audit.length, 1);
    const data = typeof audit[0]?.data === 'string' ? JSON.parse(audit[0].data) : audit[0]?.data;
    assert.deepEqual(data, { method: 'oidc', provider: 'corp', unlocked: true });
    assert.equal(audit[0]?.actor_id, 'alice');
  });

  it('an account with MFA gets a locked token (isUnlocked false), as POST /login gives, unlocked by POST /login/totp', async () => {
    const password = (await aUser(server, { name: 'mfa-user', email: 'mfa@example.test' })).token;
    const enrolled = await server.api('POST', '/login/mfa', {
      token: password,
      body: { password: USER_PASSWORD },
    });
    assert.equal(enrolled.status, 200);

    const response = await signIn('mfa');
    assert.equal(response.status, 200);
    const body = response.body;
    assert.equal(body.logged, true);
    assert.equal(body.isUnlocked, false);
    const me = await server.api('GET', '/login', { token: body.token });
    assert.equal(me.body.logged, true);
    assert.equal(me.body.isUnlocked, false);
    const locked = await server.api('GET', '/api/key', { token: body.token });
    assert.equal(locked.status, 403);
    assert.equal(locked.body.code, 'MFA_REQUIRED');

    const code = otplib.authenticator
      .clone({ epoch: clock.now().getTime() })
      .generate(enrolled.body.totpSecret);
    const unlock = await server.api('POST', '/login/totp', { token: body.token, body: { code } });
    assert.equal(unlock.status, 200);
    assert.equal((await server.api('GET', '/api/key', { token: body.token })).status, 200);
  });

  it('a state is used once: the same callback again is 401 UNAUTHENTICATED, and so is an unknown state', async () => {
    const flow = await browser('alice');
    assert.equal((await callback(flow.callback, flow.cookie)).status, 200);
    const replay = await callback(flow.callback, flow.cookie);
    assert.equal(replay.status, 401);
    const replayed = replay.body;
    assert.equal(replayed.code, 'UNAUTHENTICATED');
    assert.match(replayed.message, /already used/);

    const forged = new URL(flow.callback);
    forged.searchParams.set('state', 'not-a-state-we-issued');
    const unknown = await callback(forged, flow.cookie);
    assert.equal(unknown.status, 401);
    assert.deepEqual(Object.keys(unknown.body).sort(), ['code', 'error', 'message', 'statusCode']);
    const none = await server.api('GET', '/login/oidc/corp/callback', { query: { code: 'x' } });
    assert.equal(none.status, 401);
  });

  it('a state expires after 10 minutes', async () => {
    const flow = await browser('alice');
    clock.advance(10 * 60_000 + 1000);
    const late = await callback(flow.callback, flow.cookie);
    assert.equal(late.status, 401);
    assert.match(late.body.message, /expired/);
  });

  it('the callback must come back to the browser that started the sign-in (binding cookie), else 401', async () => {
    const flow = await browser('alice');
    const elsewhere = await callback(flow.callback);
    assert.equal(elsewhere.status, 401);
    assert.match(elsewhere.body.message, /another browser/);
    // The attempt used the state up: the right browser cannot finish it either.
    assert.equal((await callback(flow.callback, flow.cookie)).status, 401);
  });

  it('an e-mail the provider has not verified is refused with a clear error, even when an account uses it', async () => {
    const response = await signIn('unverified');
    assert.equal(response.status, 401);
    const body = response.body;
    assert.equal(body.code, 'UNAUTHENTICATED');
    assert.match(body.message, /not verified this e-mail address/);
    assert.equal(body.token, undefined);
  });

  it('a verified e-mail that no account uses is refused; no account is created', async () => {
    const response = await signIn('stranger');
    assert.equal(response.status, 401);
    assert.match(response.body.message, /No account uses the e-mail address/);
    const created = await server.app.deps.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', 'stranger@example.test')
      .execute();
    assert.deepEqual(created, []);
  });

  it('an e-mail used by several accounts is refused rather than guessed', async () => {
    const response = await signIn('twin');
    assert.equal(response.status, 401);
    assert.match(response.body.message, /Several accounts/);
  });

  it('a suspended account is refused like on POST /login', async () => {
    const id = await createUser(server, { name: 'suspended', email: 'suspended@example.test' });
    const admin = await server.adminToken();
    await server.api('PUT', `/users/${id}`, { token: admin, body: { status: 'suspended' } });
    const response = await signIn('suspended');
    assert.equal(response.status, 401);
    assert.match(response.body.message, /suspended/);
  });

  it('the provider account stays linked to the account it first signed in to, even when that e-mail changes', async () => {
    const linking = await browser('alice');
    const first = await callback(linking.callback, linking.cookie);
    assert.equal(first.status, 200);
    const admin = await server.adminToken();
    const changed = await server.api('PUT', `/users/${aliceId}`, {
      token: admin,
      body: { email: 'alice.new@example.test' },
    });
    assert.equal(changed.status, 200);
    const again = await signIn('alice');
    assert.equal(again.status, 200);
    assert.equal(again.body.user.name, 'alice');
  });

  it('an unknown provider name is 404 NOT_FOUND on start and callback', async () => {
    const startUnknown = await answer(
      await fetch(`${server.url}/api/v1/login/oidc/nope`, { redirect: 'manual' }),
    );
    assert.equal(startUnknown.status, 404);
    assert.equal(startUnknown.body.code, 'NOT_FOUND');
    const callbackUnknown = await server.api('GET', '/login/oidc/nope/callback', {
      query: { state: 's', code: 'c' },
    });
    assert.equal(callbackUnknown.status, 404);
  });

  it('with a redirect on PUBLIC_URL, the callback sends the browser there with the token in the fragment', async () => {
    const target = `${PUBLIC_URL}/app/signed-in?from=oidc`;
    const response = await signIn('alice', `?redirect=${encodeURIComponent(target)}`);
    assert.equal(response.status, 302);
    const location = new URL(response.headers.get('location') ?? '');
    assert.equal(`${location.origin}${location.pathname}${location.search}`, target);
    const fragment = new URLSearchParams(location.hash.slice(1));
    assert.equal(fragment.get('isUnlocked'), 'true');
    const me = await server.api('GET', '/login', { token: fragment.get('token') ?? '' });
    assert.equal(me.body.logged, true);
    assert.equal(me.body.user.name, 'alice');
  });

  it('a redirect on another origin is refused at the start with 400 VALIDATION_ERROR', async () => {
    const response = await answer(
      await fetch(start(`?redirect=${encodeURIComponent('https://evil.example/steal')}`), {
        redirect: 'manual',
      }),
    );
    assert.equal(response.status, 400);
    const body = response.body;
    assert.equal(body.code, 'VALIDATION_ERROR');
    assert.match(body.message, /redirect/);
  });

  // DESIGN, decided in issue 37: "No credential ever travels in a URL that leaves the API: redirects
  // carry none, and a token parameter is recognised after URL decoding, whatever its spelling."
  it('no credential travels in a redirect: a target under the API is refused at the start (400), however its path is spelled', async () => {
    // The attack: a recipient's uploaded page, opened with their link, receives the victim's session.
    const link = `shr_${'L'.repeat(43)}`;
    for (const target of [
      `${PUBLIC_URL}/api/v1/files/loadFile/hash/some-file?%74oken=${link}`,
      `${PUBLIC_URL}/api/v1/files/loadFile/hash/some-file?tok%65n=${link}`,
      `${PUBLIC_URL}/api/v1/files/loadFile/hash/some-file`,
      `${PUBLIC_URL}/api`,
      `${PUBLIC_URL}/API/v1/files/loadFile/hash/some-file`,
      `${PUBLIC_URL}/%61pi/v1/files/loadFile/hash/some-file`,
      `${PUBLIC_URL}/%2561pi/v1/files/loadFile/hash/some-file`,
      `${PUBLIC_URL}/app/%2e%2e/api/v1/files/loadFile/hash/some-file`,
      `${PUBLIC_URL}/app/..%2Fapi/v1/files/loadFile/hash/some-file`,
      `${PUBLIC_URL}//api/v1/files/loadFile/hash/some-file`,
      `${PUBLIC_URL}/app\\..\\api/v1/files/loadFile/hash/some-file`,
    ]) {
      const response = await answer(
        await fetch(start(`?redirect=${encodeURIComponent(target)}`), { redirect: 'manual' }),
      );
      assert.equal(response.status, 400, target);
      assert.equal(response.body.code, 'VALIDATION_ERROR');
      assert.match(response.body.message, /redirect/);
    }
  });

  it('no credential travels in a redirect: a token parameter in the target, whatever its spelling, and a user name and password are dropped, the rest kept', async () => {
    const link = `shr_${'L'.repeat(43)}`;
    for (const spelling of ['token', '%74oken', 'tok%65n', 'TOKEN', 'To%4Ben', '%2574oken', 'access_token']) {
      const target = `${PUBLIC_URL}/app/signed-in?${spelling}=${link}&from=oidc`;
      const response = await signIn('alice', `?redirect=${encodeURIComponent(target)}`);
      assert.equal(response.status, 302);
      const location = new URL(response.headers.get('location') ?? '');
      assert.equal(
        `${location.origin}${location.pathname}${location.search}`,
        `${PUBLIC_URL}/app/signed-in?from=oidc`,
        spelling,
      );
      assert.ok(!location.href.includes(link), spelling);
      assert.ok(new URLSearchParams(location.hash.slice(1)).get('token'), 'the session is in the fragment');
    }
    const withUser = `http://someone:a-password@${new URL(PUBLIC_URL).host}/app/signed-in`;
    const flow = await browser('alice', `?redirect=${encodeURIComponent(withUser)}`);
    const location = new URL((await callback(flow.callback, flow.cookie)).headers.get('location') ?? '');
    assert.equal(`${location.origin}${location.pathname}`, `${PUBLIC_URL}/app/signed-in`);
    assert.equal(`${location.username}${location.password}`, '', 'no user name or password either');
  });

  it('a sign-in started before that rule, whose target is under the API, lands on PUBLIC_URL/ instead', async () => {
    const flow = await browser('alice', `?redirect=${encodeURIComponent(`${PUBLIC_URL}/app/signed-in`)}`);
    // What an earlier version kept: the target as given.
    await server.app.deps.db
      .updateTable('oidc_login_states')
      .set({ redirect: `${PUBLIC_URL}/api/v1/files/loadFile/hash/some-file?%74oken=shr_${'L'.repeat(43)}` })
      .execute();
    const response = await callback(flow.callback, flow.cookie);
    assert.equal(response.status, 302);
    const location = new URL(response.headers.get('location') ?? '');
    assert.equal(`${location.origin}${location.pathname}${location.search}`, `${PUBLIC_URL}/`);
    assert.ok(new URLSearchParams(location.hash.slice(1)).get('token'));
  });

  it('the provider refusing (access denied) is 401 naming its error code', async () => {
    const started = await fetch(start(), { redirect: 'manual' });
    const state = new URL(started.headers.get('location') ?? '').searchParams.get('state') ?? '';
    const cookie = started.headers.getSetCookie()[0]?.split(';')[0] ?? '';
    const url = new URL(`${server.url}/api/v1/login/oidc/corp/callback`);
    url.search = new URLSearchParams({ error: 'access_denied', state, iss: idp.issuer }).toString();
    const response = await callback(url, cookie);
    assert.equal(response.status, 401);
    assert.match(response.body.message, /access_denied/);
  });
});

describe('third-party sign-in: refused callbacks count as failed logins of the address, as on POST /login', () => {
  const idp = useIdentityProvider();
  const server = useServer(() => ({
    env: {
      PUBLIC_URL,
      // Nothing listens on port 1: a provider that cannot be reached.
      OIDC_PROVIDERS: JSON.stringify([
        idp.entry('corp'),
        { ...idp.entry('down'), issuer: 'http://127.0.0.1:1' },
      ]),
      LOGIN_MAX_FAILURES_PER_ADDRESS: '2',
    },
  }));

  it('a provider that cannot be reached is 502 IDENTITY_PROVIDER_ERROR, its message naming no address', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await answer(
        await fetch(`${server.url}/api/v1/login/oidc/down`, { redirect: 'manual' }),
      );
      assert.equal(response.status, 502);
      assert.equal(response.body.code, 'IDENTITY_PROVIDER_ERROR');
      assert.doesNotMatch(response.body.message, /127\.0\.0\.1|secret/);
    }
  });

  it('after too many refusals the callback answers 429 RATE_LIMITED with Retry-After', async () => {
    for (let i = 0; i < 2; i++) {
      const refused = await server.api('GET', '/login/oidc/corp/callback', {
        query: { state: `bad-${i}`, code: 'c' },
      });
      assert.equal(refused.status, 401);
    }
    const limited = await server.api('GET', '/login/oidc/corp/callback', {
      query: { state: 'bad-3', code: 'c' },
    });
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 'RATE_LIMITED');
    assert.ok(Number(limited.headers.get('retry-after')) > 0);
  });
});

describe('OIDC_PROVIDERS configuration', () => {
  const valid = {
    name: 'corp',
    label: 'Corp',
    issuer: 'https://id.example',
    clientId: 'c',
    clientSecret: 's3cret-value',
  };
  const load = (providers: unknown) => loadConfig({ OIDC_PROVIDERS: JSON.stringify(providers) });

  it('is an empty list when unset, and GET /login/oidc answers no providers', async () => {
    assert.deepEqual(loadConfig({}).oidcProviders, []);
    const server = await startServer();
    try {
      assert.deepEqual((await server.api('GET', '/login/oidc')).body, { providers: [] });
    } finally {
      await server.close();
    }
  });

  it('fills defaults: openid email profile scopes, client_secret_basic, the admin tenant', () => {
    const [provider] = load([valid]).oidcProviders;
    assert.deepEqual(provider?.scopes, ['openid', 'email', 'profile']);
    assert.equal(provider?.tokenEndpointAuthMethod, 'client_secret_basic');
    assert.equal(provider?.tenant, undefined);
    assert.deepEqual(load([{ ...valid, scopes: ['email'] }]).oidcProviders[0]?.scopes, ['openid', 'email']);
  });

  it('refuses bad entries with ConfigError naming the setting, never echoing the secret', () => {
    const bad: unknown[] = [
      'not json',
      { ...valid },
      [{ ...valid, issuer: 'http://id.example' }],
      [{ ...valid, name: 'Has Spaces' }],
      [valid, valid],
      [{ ...valid, clientSecret: undefined, tokenEndpointAuthMethod: 'client_secret_post' }],
      [{ ...valid, surprise: true }],
      [{ ...valid, clientId: '' }],
    ];
    for (const value of bad) {
      assert.throws(
        () => loadConfig({ OIDC_PROVIDERS: typeof value === 'string' ? value : JSON.stringify(value) }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.message.includes('OIDC_PROVIDERS') &&
          !error.message.includes('s3cret'),
      );
    }
    assert.equal(load([{ ...valid, issuer: 'http://127.0.0.1:4000' }]).oidcProviders.length, 1);
  });
});

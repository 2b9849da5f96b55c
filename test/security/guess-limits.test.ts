import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import otplib from 'otplib';
import { ManualClock } from '../../src/base/clock.js';
import { aUser, withMail } from '../helpers/people.js';
import {
  createUser,
  startServer,
  type ApiResponse,
  type TestServer,
  USER_PASSWORD,
} from '../helpers/server.js';
import { anExternalShare, smsCodeTo } from '../helpers/sharing.js';
import { decode } from '../helpers/smtp.js';
import { startIdentityProvider } from '../helpers/oidc.js';
import { useServer, useStarted } from '../helpers/use-server.js';

/**
 * DESIGN "Decided this round": limits on guesses are reserved before the secret is checked, so
 * parallel attempts count. Each test sends a burst of wrong secrets at once, and the right one while
 * they are in flight: no more attempts than the limit may be checked (answered 401, or 200 for the
 * right one), every other one is refused with 429 before its secret is looked at, and the right one
 * does not get through.
 */

const LIMIT = 5;
const BURST = 40;

interface Burst {
  sent: number;
  /** Answers whose secret was checked: 401 (wrong) and 200 (right). */
  checked: number;
  refused: number;
  rightThrough: boolean;
  statuses: number[];
}

/**
 * Sends `wrong(i)` BURST - 1 times at once and, once the server has received them all (its HTTP
 * server's `request` events) while their secrets are still being checked, `right()`; counts what was
 * checked.
 */
async function burst(
  servers: TestServer | TestServer[],
  wrong: (i: number) => Promise<ApiResponse>,
  right: () => Promise<ApiResponse>,
): Promise<Burst> {
  const nodes = [servers].flat().map((s) => s.app.server.server);
  let received = 0;
  const count = () => received++;
  for (const http of nodes) http.on('request', count);
  const wrongs = Array.from({ length: BURST - 1 }, (_, i) => wrong(i));
  for (let i = 0; i < 500 && received < BURST - 1; i++) await sleep(10);
  for (const http of nodes) http.off('request', count);
  await sleep(5);
  const rightAnswer = right();
  const answers = await Promise.all([...wrongs, rightAnswer]);
  const statuses = answers.map((a) => a.status);
  const result: Burst = {
    sent: BURST,
    checked: statuses.filter((s) => s === 401 || s === 200).length,
    refused: statuses.filter((s) => s === 429).length,
    rightThrough: (await rightAnswer).status === 200,
    statuses,
  };
  // The figures go into the closing note.
  console.log(`    burst: ${JSON.stringify({ ...result, statuses: undefined })}`);
  return result;
}

function assertHeld(result: Burst, limit = LIMIT) {
  assert.ok(
    result.checked <= limit,
    `${result.checked} attempts checked (limit ${limit}): ${result.statuses.join()}`,
  );
  assert.equal(
    result.checked + result.refused,
    result.sent,
    `only 401, 200 and 429: ${result.statuses.join()}`,
  );
  assert.equal(result.rightThrough, false, 'the right secret got through after the limit');
}

/** Four requests at once with the right single-use secret: exactly one is accepted, the others refused. */
function assertOneOfFourAccepted(answers: ApiResponse[]) {
  assert.deepEqual(
    answers.map((a) => a.status).sort(),
    [200, 401, 401, 401],
    answers.map((a) => a.text).join('\n'),
  );
}

function totpAt(clock: ManualClock, secret: string): string {
  return otplib.authenticator.clone({ epoch: clock.now().getTime() }).generate(secret);
}

describe('guess limits hold under parallel bursts and a TOTP step is used once', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({
    clock,
    smtp: true,
    env: {
      LOGIN_MAX_FAILURES_PER_ACCOUNT: String(LIMIT),
      LOGIN_MAX_FAILURES_PER_ADDRESS: '12',
      LOGIN_WINDOW_SECONDS: '600',
    },
  });
  const nextWindow = () => clock.advance(601_000);

  /** A new user's document (no PDF) shared with `email` under `recipient`'s protection: the recipient's link. */
  async function aProtectedLink(
    owner: string,
    title: string,
    email: string,
    recipient: Record<string, unknown>,
  ) {
    const token = (await aUser(server, withMail(owner))).token;
    return (await anExternalShare(server, token, { title, pdf: null, email, recipient })).link;
  }

  async function enrolled(name: string) {
    await createUser(server, { name });
    const token = await server.login(name, USER_PASSWORD);
    const mfa = await server.api('POST', '/login/mfa', { token, body: { password: USER_PASSWORD } });
    assert.equal(mfa.status, 200, mfa.text);
    return mfa.body as { recoveryCodes: string[]; totpSecret: string };
  }

  it('a login password burst on one account is limited: no more than the per-account limit checked, the right password refused', async () => {
    nextWindow();
    await createUser(server, { name: 'burst-login' });
    const result = await burst(
      server,
      (i) => server.api('POST', '/login', { body: { name: 'burst-login', password: `wrong-${i}-password` } }),
      () => server.api('POST', '/login', { body: { name: 'burst-login', password: USER_PASSWORD } }),
    );
    assertHeld(result);
    const blocked = await server.api('POST', '/login', {
      body: { name: 'burst-login', password: USER_PASSWORD },
    });
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    nextWindow();
    assert.equal(
      (await server.api('POST', '/login', { body: { name: 'burst-login', password: USER_PASSWORD } })).status,
      200,
    );
  });

  it('a login password burst from one address over many accounts is limited by the per-address limit', async () => {
    nextWindow();
    await createUser(server, { name: 'burst-address' });
    const result = await burst(
      server,
      (i) => server.api('POST', '/login', { body: { name: `spray-${i}`, password: 'wrong-password' } }),
      () => server.api('POST', '/login', { body: { name: 'burst-address', password: USER_PASSWORD } }),
    );
    assertHeld(result, 12);
    nextWindow();
  });

  it('a share password burst is limited: no more than 5 checked, the right password refused', async () => {
    nextWindow();
    const link = await aProtectedLink('share-owner', 'Password burst', 'burst-password@example.org', {
      password: 'the-share-password',
    });
    const result = await burst(
      server,
      (i) => server.api('POST', '/share/unlock', { token: link, body: { password: `wrong-${i}` } }),
      () => server.api('POST', '/share/unlock', { token: link, body: { password: 'the-share-password' } }),
    );
    assertHeld(result);
  });

  /**
   * A burst of one-time codes at a share whose code went by `channel`: the right code is read where
   * it was sent (the mail, or the SMS file of the default sender), the wrong ones are its neighbours.
   */
  async function codeBurst(name: string, channel: 'email' | 'sms') {
    nextWindow();
    const phone = '+41795550037';
    const email = `burst-${name}@example.org`;
    const link = await aProtectedLink(
      `${name}-owner`,
      `Burst ${name}`,
      email,
      channel === 'sms' ? { phone } : { emailCode: true },
    );
    const sent = await server.api('POST', '/share/otp', {
      token: link,
      body: channel === 'sms' ? { channel } : {},
    });
    assert.equal(sent.status, 200, sent.text);
    const code =
      channel === 'sms'
        ? await smsCodeTo(server, phone)
        : /Code: (\d{6})/.exec(decode((await server.smtp.waitFor(email, /Code: \d{6}/)).raw))![1]!;
    assert.ok(code, `the code sent by ${channel}`);
    const wrong = (i: number) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0');
    return burst(
      server,
      (i) => server.api('POST', '/share/unlock', { token: link, body: { otp: wrong(i) } }),
      () => server.api('POST', '/share/unlock', { token: link, body: { otp: code } }),
    );
  }

  it('a share e-mail code burst is limited: no more than 5 checked, the right code refused', async () => {
    assertHeld(await codeBurst('mail', 'email'));
  });

  it('a share SMS code burst is limited: no more than 5 checked, the right code refused', async () => {
    assertHeld(await codeBurst('sms', 'sms'));
  });

  it('a TOTP burst is limited: no more than 5 codes checked, the right code refused', async () => {
    nextWindow();
    const mfa = await enrolled('burst-totp');
    const token = await server.login('burst-totp', USER_PASSWORD);
    const code = totpAt(clock, mfa.totpSecret);
    const wrong = (i: number) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0');
    const result = await burst(
      server,
      (i) => server.api('POST', '/login/totp', { token, body: { code: wrong(i) } }),
      () => server.api('POST', '/login/totp', { token, body: { code } }),
    );
    assertHeld(result);
  });

  it('a recovery code burst is limited: no more than 5 codes checked, the right code refused', async () => {
    nextWindow();
    const mfa = await enrolled('burst-recovery');
    const token = await server.login('burst-recovery', USER_PASSWORD);
    const result = await burst(
      server,
      (i) =>
        server.api('POST', '/login/recovery', { token, body: { recoveryCode: `wrong-recovery-code-${i}` } }),
      () => server.api('POST', '/login/recovery', { token, body: { recoveryCode: mfa.recoveryCodes[0] } }),
    );
    assertHeld(result);
  });

  it('a TOTP time step, once used, is not accepted again for that user: the code of session 1 does not unlock session 2', async () => {
    nextWindow();
    const mfa = await enrolled('totp-replay');
    const first = await server.login('totp-replay', USER_PASSWORD);
    const second = await server.login('totp-replay', USER_PASSWORD);
    const code = totpAt(clock, mfa.totpSecret);
    assert.equal((await server.api('POST', '/login/totp', { token: first, body: { code } })).status, 200);
    const replay = await server.api('POST', '/login/totp', { token: second, body: { code } });
    assert.equal(replay.status, 401, replay.text);
    assert.equal((await server.api('GET', '/login', { token: second })).body.isUnlocked, false);
    // The previous step's code (still inside the drift allowance) is no later than the one used.
    clock.advance(30_000);
    const later = totpAt(clock, mfa.totpSecret);
    assert.equal(
      (await server.api('POST', '/login/totp', { token: second, body: { code: later } })).status,
      200,
    );
  });

  it('a TOTP time step is used once under parallel use: of two sessions sending the same code at once, exactly one is unlocked', async () => {
    nextWindow();
    const mfa = await enrolled('totp-race');
    const sessions = await Promise.all(
      Array.from({ length: 4 }, () => server.login('totp-race', USER_PASSWORD)),
    );
    const code = totpAt(clock, mfa.totpSecret);
    const answers = await Promise.all(
      sessions.map((token) => server.api('POST', '/login/totp', { token, body: { code } })),
    );
    assertOneOfFourAccepted(answers);
  });

  it('a share code is used once under parallel use: of four requests with the right code at once, exactly one opens a session', async () => {
    nextWindow();
    const link = await aProtectedLink('race-owner', 'Code race', 'race-code@example.org', {
      emailCode: true,
    });
    assert.equal((await server.api('POST', '/share/otp', { token: link, body: {} })).status, 200);
    const mail = await server.smtp.waitFor('race-code@example.org', /Code: \d{6}/);
    const code = /Code: (\d{6})/.exec(decode(mail.raw))![1]!;
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        server.api('POST', '/share/unlock', { token: link, body: { otp: code } }),
      ),
    );
    assertOneOfFourAccepted(answers);
  });

  it('a login password burst spread over two nodes sharing one database is limited as on one', async () => {
    nextWindow();
    await createUser(server, { name: 'burst-nodes' });
    const other = await startServer({
      sameStoreAs: server,
      clock,
      env: {
        LOGIN_MAX_FAILURES_PER_ACCOUNT: String(LIMIT),
        LOGIN_MAX_FAILURES_PER_ADDRESS: '1000',
        LOGIN_WINDOW_SECONDS: '600',
      },
    });
    try {
      const node = (i: number) => (i % 2 === 0 ? server : other);
      const result = await burst(
        [server, other],
        (i) =>
          node(i).api('POST', '/login', { body: { name: 'burst-nodes', password: `wrong-${i}-password` } }),
        () => other.api('POST', '/login', { body: { name: 'burst-nodes', password: USER_PASSWORD } }),
      );
      assertHeld(result);
    } finally {
      await other.close();
    }
  });
});

describe('identity-provider sign-in refusals are a guess limit too (the address), under a parallel burst', () => {
  const PUBLIC_URL = 'http://signery.test';
  const idp = useStarted(
    'the identity provider',
    () =>
      startIdentityProvider({
        redirectUris: [`${PUBLIC_URL}/api/v1/login/oidc/corp/callback`],
        accounts: [{ id: 'alice', email: 'alice@example.test', emailVerified: true }],
      }),
    (p) => p.close(),
  );
  const server = useServer(() => ({
    env: {
      PUBLIC_URL,
      OIDC_PROVIDERS: JSON.stringify([idp.entry('corp')]),
      LOGIN_MAX_FAILURES_PER_ADDRESS: String(LIMIT),
    },
  }));

  it('a burst of refused third-party sign-in callbacks is limited: no more than the per-address limit checked', async () => {
    const callback = (i: number) =>
      server.api('GET', '/login/oidc/corp/callback', { query: { state: `forged-${i}`, code: 'c' } });
    const result = await burst(server, callback, () => callback(BURST));
    assertHeld(result);
  });
});

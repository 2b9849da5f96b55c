import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import otplib from 'otplib';
import { ManualClock } from '../../src/base/clock.js';
import { ADMIN, createUser } from '../helpers/server.js';
import { aUser } from '../helpers/people.js';
import { useServer } from '../helpers/use-server.js';

const DAY = 86_400_000;

describe('spec: Session token table', () => {
  const clock = new ManualClock(new Date());
  const server = useServer({ clock });

  it('none → unlocked: POST /login with a valid name and password, account without MFA, returns an unlocked token', async () => {
    const response = await server.api('POST', '/login', {
      body: { name: ADMIN.name, password: ADMIN.password },
    });
    assert.equal(response.status, 200);
    assert.equal(response.body.logged, true);
    assert.equal(response.body.isUnlocked, true);
    assert.equal(response.body.hasPassword, true);
    assert.equal(response.body.tenant, 'default');
    assert.match(response.body.token, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(response.body.rights.includes('use_webhooks'));
    assert.deepEqual(response.body.user.config.signature, []);
    assert.deepEqual(Object.keys(response.body.settings).sort().slice(0, 0), []);
    assert.equal(response.body.settings.isLlmEnabled, false);
    assert.ok('wopiClient' in response.body.settings);
    assert.deepEqual(response.body.settings.disabledLanguages, []);
    const me = await server.api('GET', '/login', { token: response.body.token });
    assert.equal(me.body.logged, true);
    assert.equal(me.body.isUnlocked, true);
    assert.equal(me.body.user.name, ADMIN.name);
  });

  it('a wrong password or an unknown name answers 401 UNAUTHENTICATED with the same message', async () => {
    await createUser(server, { name: 'wrongpass' });
    const wrong = await server.api('POST', '/login', {
      body: { name: 'wrongpass', password: 'nope-nope-nope' },
    });
    const unknown = await server.api('POST', '/login', {
      body: { name: 'nobody-here', password: 'nope-nope-nope' },
    });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.code, 'UNAUTHENTICATED');
    assert.equal(unknown.status, 401);
    assert.equal(unknown.body.message, wrong.body.message);
    const otherTenant = await server.api('POST', '/login', {
      body: { name: ADMIN.name, password: ADMIN.password, tenant: 'elsewhere' },
    });
    assert.equal(otherTenant.status, 401);
  });

  it('returnToken false leaves the token out of POST /login and GET /login', async () => {
    const response = await server.api('POST', '/login', {
      body: { name: ADMIN.name, password: ADMIN.password, returnToken: false },
    });
    assert.equal(response.status, 200);
    assert.equal(response.body.token, undefined);
    const token = await server.adminToken();
    const me = await server.api('GET', '/login', { token, query: { returnToken: 'false' } });
    assert.equal(me.body.logged, true);
    assert.equal(me.body.token, undefined);
    const withToken = await server.api('GET', '/login', { token });
    assert.equal(withToken.body.token, token);
  });

  it('GET /login without a token answers 200 {logged:false}; an unknown token too', async () => {
    const none = await server.api('GET', '/login');
    assert.equal(none.status, 200);
    assert.deepEqual(none.body, { logged: false });
    const unknown = await server.api('GET', '/login', { token: 'x'.repeat(43) });
    assert.equal(unknown.status, 200);
    assert.deepEqual(unknown.body, { logged: false });
  });

  it('other endpoints without a token, or with an unknown one, answer 401 UNAUTHENTICATED', async () => {
    const none = await server.api('GET', '/api/key');
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 'UNAUTHENTICATED');
    const unknown = await server.api('GET', '/api/key', { token: 'y'.repeat(43) });
    assert.equal(unknown.status, 401);
  });

  it('locked or unlocked → invalid: GET /logout ends only this token, other sessions stay valid', async () => {
    const first = await server.login(ADMIN.name, ADMIN.password);
    const second = await server.login(ADMIN.name, ADMIN.password);
    const out = await server.api('GET', '/logout', { token: first });
    assert.equal(out.status, 200);
    assert.deepEqual(out.body, { status: 'SUCCESS' });
    assert.deepEqual((await server.api('GET', '/login', { token: first })).body, { logged: false });
    assert.equal((await server.api('GET', '/api/key', { token: first })).status, 401);
    assert.equal((await server.api('GET', '/api/key', { token: second })).status, 200);
  });

  it('spec API key: "invalid immediately after DELETE /api/key/:token": GET /logout with a key is 400 naming DELETE /api/key, and the key stays valid', async () => {
    const admin = await server.login(ADMIN.name, ADMIN.password);
    const key = (await server.api('POST', '/api/key', { token: admin, body: {} })).body.id as string;
    const out = await server.api('GET', '/logout', { token: key });
    assert.equal(out.status, 400, out.text);
    assert.equal(out.body.code, 'VALIDATION_ERROR');
    assert.match(out.body.message, /DELETE \/api\/key/);
    assert.ok(!out.body.message.includes(key), 'the key is not echoed');
    assert.equal((await server.api('GET', '/api/key', { token: key })).status, 200, 'the key still works');
  });

  it('sessions live 30 days: afterwards GET /login answers {logged:false} and other calls 401', async () => {
    const token = (await aUser(server, { name: 'expiring' })).token;
    clock.advance(29 * DAY);
    assert.equal((await server.api('GET', '/login', { token })).body.logged, true);
    clock.advance(1 * DAY + 1000);
    assert.deepEqual((await server.api('GET', '/login', { token })).body, { logged: false });
    const call = await server.api('GET', '/api/key', { token });
    assert.equal(call.status, 401);
    assert.match(call.body.message, /expired/);
  });

  it('the token is accepted from the cookie set by POST /login with cookie true, and from a Bearer header', async () => {
    const response = await server.api('POST', '/login', {
      body: { name: ADMIN.name, password: ADMIN.password, cookie: true, returnToken: false },
    });
    const cookie = response.headers.get('set-cookie') ?? '';
    assert.match(cookie, /signery_token=[^;]+;.*HttpOnly/i);
    assert.match(cookie, /SameSite=Strict/i);
    const viaCookie = await server.api('GET', '/api/key', {
      headers: { cookie: cookie.split(';')[0] ?? '' },
    });
    assert.equal(viaCookie.status, 200);
    const token = await server.login(ADMIN.name, ADMIN.password);
    const viaBearer = await server.api('GET', '/api/key', { headers: { authorization: `Bearer ${token}` } });
    assert.equal(viaBearer.status, 200);
  });

  it('the session lifetime follows the sessionTtlDays property', async () => {
    const admin = await server.login(ADMIN.name, ADMIN.password);
    const set = await server.api('PUT', '/settings/properties', {
      token: admin,
      body: { sessionTtlDays: 2 },
    });
    assert.equal(set.status, 200);
    const token = await server.login(ADMIN.name, ADMIN.password);
    clock.advance(2 * DAY + 1000);
    assert.deepEqual((await server.api('GET', '/login', { token })).body, { logged: false });
    const reset = await server.login(ADMIN.name, ADMIN.password);
    await server.api('PUT', '/settings/properties', { token: reset, body: { sessionTtlDays: 30 } });
  });
});

describe('Contract: MFA (POST /login/mfa, /login/totp, /login/recovery, DELETE /login/mfa)', () => {
  const server = useServer();

  async function enroll(name: string) {
    await createUser(server, { name });
    const token = await server.login(name, 'user-password-1');
    const response = await server.api('POST', '/login/mfa', { token, body: { password: 'user-password-1' } });
    assert.equal(response.status, 200);
    return response.body as { recoveryCodes: string[]; totpSecret: string; otpauthUrl: string };
  }

  it('enabling MFA returns ten recovery codes, the TOTP secret and an otpauth URL', async () => {
    const mfa = await enroll('mfa-enrol');
    assert.equal(mfa.recoveryCodes.length, 10);
    assert.equal(new Set(mfa.recoveryCodes).size, 10);
    assert.match(mfa.totpSecret, /^[A-Z2-7]+=*$/);
    assert.match(mfa.otpauthUrl, /^otpauth:\/\/totp\/.*secret=/);
  });

  it('none → locked: with MFA, POST /login returns a locked token; GET /login says logged true, isUnlocked false', async () => {
    await enroll('mfa-locked');
    const response = await server.api('POST', '/login', {
      body: { name: 'mfa-locked', password: 'user-password-1' },
    });
    assert.equal(response.status, 200);
    assert.equal(response.body.isUnlocked, false);
    const me = await server.api('GET', '/login', { token: response.body.token });
    assert.equal(me.body.logged, true);
    assert.equal(me.body.isUnlocked, false);
  });

  it('a locked token gets 403 MFA_REQUIRED everywhere else', async () => {
    await enroll('mfa-blocked');
    const token = await server.login('mfa-blocked', 'user-password-1');
    for (const [method, path] of [
      ['GET', '/api/key'],
      ['POST', '/api/key'],
      ['POST', '/groups/search'],
      ['DELETE', '/login/mfa'],
      ['POST', '/login/mfa'],
    ] as const) {
      const response = await server.api(method, path, { token, ...(method === 'POST' ? { body: {} } : {}) });
      assert.equal(response.status, 403, `${method} ${path}`);
      assert.equal(response.body.code, 'MFA_REQUIRED');
    }
  });

  it('locked → unlocked: a valid unused recovery code unlocks and is consumed; remainingRecoveryCodes counts down; a reused code fails', async () => {
    const mfa = await enroll('mfa-recovery');
    const token = await server.login('mfa-recovery', 'user-password-1');
    const code = mfa.recoveryCodes[0] ?? '';
    const unlocked = await server.api('POST', '/login/recovery', { token, body: { recoveryCode: code } });
    assert.equal(unlocked.status, 200);
    assert.deepEqual(unlocked.body, { remainingRecoveryCodes: 9 });
    assert.equal((await server.api('GET', '/login', { token })).body.isUnlocked, true);
    assert.equal((await server.api('GET', '/api/key', { token })).status, 200);

    const next = await server.login('mfa-recovery', 'user-password-1');
    const reused = await server.api('POST', '/login/recovery', { token: next, body: { recoveryCode: code } });
    assert.equal(reused.status, 401);
    assert.equal(reused.body.code, 'UNAUTHENTICATED');
    assert.equal((await server.api('GET', '/login', { token: next })).body.isUnlocked, false);
    const other = await server.api('POST', '/login/recovery', {
      token: next,
      body: { recoveryCode: (mfa.recoveryCodes[1] ?? '').toUpperCase() },
    });
    assert.deepEqual(other.body, { remainingRecoveryCodes: 8 });
  });

  it('spec Session token: "locked → POST /login/recovery → unlocked, code consumed": on an unlocked session the code is not consumed', async () => {
    const mfa = await enroll('mfa-unlocked');
    const token = await server.login('mfa-unlocked', 'user-password-1');
    const code = mfa.recoveryCodes[0] ?? '';
    const first = await server.api('POST', '/login/recovery', { token, body: { recoveryCode: code } });
    assert.deepEqual(first.body, { remainingRecoveryCodes: 9 });
    const again = await server.api('POST', '/login/recovery', {
      token,
      body: { recoveryCode: mfa.recoveryCodes[1] },
    });
    assert.equal(again.status, 400, again.text);
    assert.equal(again.body.code, 'VALIDATION_ERROR');
    assert.match(again.body.message, /already unlocked/);
    const next = await server.login('mfa-unlocked', 'user-password-1');
    const spent = await server.api('POST', '/login/recovery', {
      token: next,
      body: { recoveryCode: mfa.recoveryCodes[1] },
    });
    assert.deepEqual(spent.body, { remainingRecoveryCodes: 8 }, 'the second code was still unused');
  });

  it('POST /login/totp with the current code unlocks the token; a wrong code does not', async () => {
    const mfa = await enroll('mfa-totp');
    const token = await server.login('mfa-totp', 'user-password-1');
    const wrong = await server.api('POST', '/login/totp', { token, body: { code: '000000' } });
    const expected = otplib.authenticator.generate(mfa.totpSecret);
    if (expected !== '000000') assert.equal(wrong.status, 401);
    const right = await server.api('POST', '/login/totp', { token, body: { code: expected } });
    assert.equal(right.status, 200);
    assert.equal((await server.api('GET', '/login', { token })).body.isUnlocked, true);
  });

  it('second-factor guessing is throttled: after 5 wrong codes even a right one is refused with 429 and Retry-After', async () => {
    const mfa = await enroll('mfa-guess');
    const token = await server.login('mfa-guess', 'user-password-1');
    for (let i = 0; i < 5; i++) {
      await server.api('POST', '/login/recovery', { token, body: { recoveryCode: `wrong-${i}` } });
    }
    const blocked = await server.api('POST', '/login/recovery', {
      token,
      body: { recoveryCode: mfa.recoveryCodes[0] },
    });
    assert.equal(blocked.status, 429);
    assert.equal(blocked.body.code, 'RATE_LIMITED');
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
  });

  it('DELETE /login/mfa disables MFA: the next login is unlocked', async () => {
    await enroll('mfa-off');
    const locked = await server.login('mfa-off', 'user-password-1');
    const mfa = await server.api('GET', '/login', { token: locked });
    assert.equal(mfa.body.isUnlocked, false);
    assert.deepEqual(mfa.body.user.authenticationFactors, ['password', 'totp']);
    // Unlock with a fresh enrolment's code is impossible here, so use an unlocked session made before MFA.
    const adminToken = await server.adminToken();
    const enable = await server.api('POST', '/login/mfa', {
      token: adminToken,
      body: { password: ADMIN.password },
    });
    const code = enable.body.recoveryCodes[0];
    const adminLocked = await server.login(ADMIN.name, ADMIN.password);
    await server.api('POST', '/login/recovery', { token: adminLocked, body: { recoveryCode: code } });
    const off = await server.api('DELETE', '/login/mfa', { token: adminLocked });
    assert.equal(off.status, 200);
    const after = await server.api('POST', '/login', {
      body: { name: ADMIN.name, password: ADMIN.password },
    });
    assert.equal(after.body.isUnlocked, true);
    assert.deepEqual(after.body.user.authenticationFactors, ['password']);
  });
});

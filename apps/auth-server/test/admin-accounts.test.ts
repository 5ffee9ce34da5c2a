import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  askEmailChange,
  browser,
  browserLogin,
  createClient,
  createUser,
  discover,
  pkceSignIn,
  publicSpa,
  REDIRECT_URI,
  startMailbox,
  type Mailbox,
} from '@portcullis/testing';

let t: TestAuthServer;
let mailbox: Mailbox;
beforeAll(async () => {
  mailbox = await startMailbox();
  t = await startTestAuthServer({ SMTP_URL: mailbox.url });
});
afterAll(async () => {
  await t?.close();
  await mailbox?.close();
});

const SCOPE = 'openid offline_access api';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The kinds of the newest audit rows about `subject` or `clientId`. */
async function audited(about: { subject?: string; clientId?: string }): Promise<string[]> {
  const res = await t.admin('GET', '/admin/audit?limit=100');
  return (res.body.items as { kind: string; subject: string; clientId: string }[])
    .filter((e) => (about.subject ? e.subject === about.subject : e.clientId === about.clientId))
    .map((e) => e.kind);
}

describe('admin: users', () => {
  test('a disabled user cannot sign in and their refresh token stops working; enabling lets them in again', async () => {
    const user = await createUser(t);
    const config = await discover(t, (await publicSpa(t)).client_id);
    const tokens = await pkceSignIn(config, user, { scope: SCOPE });

    const disabled = await t.admin('POST', `/admin/users/${user.id}/disable`);
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ id: user.id, disabledAt: expect.any(String) });
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    await expect(pkceSignIn(config, user, { scope: SCOPE })).rejects.toThrow(/form POST/);
    const listed = await t.admin('GET', '/admin/users?limit=100');
    expect(listed.body.items.find((u: { id: string }) => u.id === user.id).disabledAt).toBeTruthy();

    const enabled = await t.admin('POST', `/admin/users/${user.id}/enable`);
    expect(enabled.body).toMatchObject({ id: user.id, disabledAt: null });
    // The old refresh token stays revoked; a new sign-in works.
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    const again = await pkceSignIn(config, user, { scope: SCOPE });
    await expect(oidc.refreshTokenGrant(config, again.refresh_token!)).resolves.toMatchObject({
      access_token: expect.any(String),
    });
    expect(await audited({ subject: user.id })).toEqual(
      expect.arrayContaining(['user_disabled', 'user_enabled']),
    );
  });

  test('a reset password works, the old one does not, and earlier tokens are revoked', async () => {
    const user = await createUser(t);
    const config = await discover(t, (await publicSpa(t)).client_id);
    const tokens = await pkceSignIn(config, user, { scope: SCOPE });
    await sleep(5); // the reset's instant is after the sign-in's, to the millisecond

    const weak = await t.admin('POST', `/admin/users/${user.id}/password`, { password: 'short' });
    expect(weak.status).toBe(422);
    expect(weak.body).toMatchObject({
      error: 'validation_failed',
      fields: { password: [expect.any(String)] },
    });

    const reset = await t.admin('POST', `/admin/users/${user.id}/password`, {
      password: 'a-new-long-password',
    });
    expect(reset.status).toBe(200);
    expect(reset.body.password).toBeUndefined();
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    await expect(pkceSignIn(config, user, { scope: SCOPE })).rejects.toThrow(/form POST/);
    await expect(
      pkceSignIn(config, { ...user, password: 'a-new-long-password' }, { scope: SCOPE }),
    ).resolves.toMatchObject({ access_token: expect.any(String) });

    const generated = await t.admin('POST', `/admin/users/${user.id}/password`, { generate: true });
    expect(generated.body.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    await expect(
      pkceSignIn(config, { ...user, password: generated.body.password }, { scope: SCOPE }),
    ).resolves.toMatchObject({ access_token: expect.any(String) });
    const rows = await t.admin('GET', '/admin/audit?kind=password_reset&limit=100');
    expect(JSON.stringify(rows.body)).not.toContain(generated.body.password);
    expect(await audited({ subject: user.id })).toContain('password_reset');
  });

  test('roles: replaced, validated, audited; unknown users are 404', async () => {
    const user = await createUser(t, ['viewer']);
    const changed = await t.admin('PATCH', `/admin/users/${user.id}`, { roles: ['editor'] });
    expect(changed.status).toBe(200);
    expect(changed.body.roles).toEqual(['editor']);
    const bad = await t.admin('PATCH', `/admin/users/${user.id}`, { roles: ['root'] });
    expect(bad.status).toBe(422);
    expect(bad.body.fields.roles).toBeDefined();
    expect(await audited({ subject: user.id })).toContain('user_roles_changed');
    for (const [method, path, body] of [
      ['PATCH', '/admin/users/nobody', { roles: [] }],
      ['POST', '/admin/users/nobody/disable', undefined],
      ['POST', '/admin/users/nobody/password', { generate: true }],
    ] as const) {
      const res = await t.admin(method, path, body);
      expect(res.status).toBe(404);
      expect(res.body.error).toBe('not_found');
    }
  });
});

// docs/security.md "What a recovery ends": the administrator's doors.
describe('admin: what a change of credential or owner ends', () => {
  test.each([
    ['disabling the user', (id: string) => t.admin('POST', `/admin/users/${id}/disable`)],
    [
      'setting a password',
      (id: string) => t.admin('POST', `/admin/users/${id}/password`, { generate: true }),
    ],
    ['forcing a reset', (id: string) => t.admin('POST', `/admin/users/${id}/password-reset`)],
    ['ending all sessions', (id: string) => t.admin('DELETE', `/admin/users/${id}/sessions`)],
    [
      'removing the second factors',
      (id: string) => t.admin('DELETE', `/admin/users/${id}/factors`),
    ],
  ])('%s ends tokens, sessions and a pending e-mail change', async (_door, door) => {
    const user = await createUser(t);
    const config = await discover(t, (await publicSpa(t)).client_id);
    const tokens = await pkceSignIn(config, user, { scope: SCOPE });
    // Someone holding the password asks to move the account to their address.
    const address = `moved-${user.id.slice(0, 8)}@example.com`;
    const { b, token } = await askEmailChange(t, mailbox, user, address);
    await sleep(5);

    expect((await door(user.id)).status).toBeLessThan(300);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect((await b.get(`${t.issuer}/account`)).status).toBe(401);
    const confirmed = await browser().postForm(`${t.issuer}/account/email/confirm`, { token });
    expect(confirmed.status).toBe(400);
    expect((await t.admin('GET', `/admin/users/${user.id}`)).body.email).toBe(user.email);
  });
});

describe('admin: clients', () => {
  test('a rotated secret works; the old one is 401 invalid_client', async () => {
    const client = await createClient(t, { grant_types: ['client_credentials'], scope: 'api' });
    const old = await discover(t, client.client_id, client.client_secret);
    expect((await oidc.clientCredentialsGrant(old)).access_token).toBeTruthy();

    const rotated = await t.admin('POST', `/admin/clients/${client.client_id}/secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated.body.client_secret).not.toBe(client.client_secret);
    const refused = await oidc.clientCredentialsGrant(old).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      status: 401,
      cause: [{ parameters: expect.objectContaining({ error: 'invalid_client' }) }],
    });
    const fresh = await discover(t, client.client_id, rotated.body.client_secret);
    expect((await oidc.clientCredentialsGrant(fresh)).access_token).toBeTruthy();
    expect(await audited({ clientId: client.client_id })).toContain('client_secret_rotated');

    const spa = await publicSpa(t);
    const none = await t.admin('POST', `/admin/clients/${spa.client_id}/secret`);
    expect(none.status).toBe(409);
    expect(none.body.error).toBe('conflict');
  });

  test('update changes what /authorize accepts, validated like create', async () => {
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const other = 'http://localhost:5173/other-callback';
    const authorize = async () => {
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: other,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      });
      return fetch(url, { redirect: 'manual' });
    };
    // Not registered: oidc-provider renders its error page, never redirecting there.
    expect((await authorize()).status).toBe(400);

    const updated = await t.admin('PATCH', `/admin/clients/${spa.client_id}`, {
      redirect_uris: [REDIRECT_URI, other],
      client_name: 'Renamed',
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      client_name: 'Renamed',
      redirect_uris: [REDIRECT_URI, other],
    });
    expect(updated.body.client_secret).toBeUndefined();
    const accepted = await authorize();
    expect(accepted.status).toBe(303);
    expect(accepted.headers.get('location')).toMatch(/\/interaction\//);

    const stop = await browserLogin((await authorizeUrl()).href, await createUser(t));
    expect(stop.href.startsWith(REDIRECT_URI)).toBe(true);

    for (const [body, field] of [
      [{ redirect_uris: [] }, 'redirect_uris'],
      [{ redirect_uris: ['myapp:/cb'] }, 'redirect_uris'],
      [{ roles: ['editor'] }, 'roles'],
      [{ grant_types: ['client_credentials'] }, 'grant_types'],
      [{}, '(body)'],
    ] as const) {
      const res = await t.admin('PATCH', `/admin/clients/${spa.client_id}`, body);
      expect(res.status).toBe(422);
      expect(res.body.error).toBe('validation_failed');
      expect(Object.keys(res.body.fields)).toContain(field);
    }
    expect((await t.admin('PATCH', '/admin/clients/nobody', { scope: 'api' })).status).toBe(404);
    expect(await audited({ clientId: spa.client_id })).toContain('client_updated');

    async function authorizeUrl() {
      return oidc.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      });
    }
  });
});

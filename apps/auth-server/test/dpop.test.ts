import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  SignJWT,
  type GenerateKeyPairResult,
} from 'jose';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  approveDevice,
  browser,
  createClient,
  createUser,
  decodeJwt,
  discover,
  pkceSignIn,
  publicSpa,
  tokenRequest,
} from '@portcullis/testing';

// DPoP (RFC 9449) at /token, with openid-client as the client: every grant binds its
// access token to the proof's key; refresh tokens of public clients are bound too.
let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer({}, { deviceIntervalSeconds: 1 });
});
afterAll(async () => {
  await t?.close();
});

async function dpopKey() {
  const keyPair = await generateKeyPair('ES256');
  const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
  return { keyPair, jkt };
}

/** A DPoP proof for POST `url`, signed with `keyPair` (for requests openid-client would not send). */
async function proof(keyPair: GenerateKeyPairResult, url: string, nonce?: string) {
  return new SignJWT({
    htm: 'POST',
    htu: url,
    jti: randomUUID(),
    ...(nonce ? { nonce } : {}),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: await exportJWK(keyPair.publicKey) })
    .setIssuedAt()
    .sign(keyPair.privateKey);
}

/** What openid-client reports for a refused grant: the OAuth error code and its HTTP status. */
async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    const e = error as { error?: string; status?: number };
    return { error: e.error, status: e.status };
  }
  throw new Error('the request was not refused');
}

const cnfOf = (accessToken: string) =>
  (decodeJwt(accessToken).payload as { cnf?: { jkt?: string } }).cnf;

describe('DPoP at /token (RFC 9449)', () => {
  test('discovery names the proof algorithms; no nonce is handed out by default', async () => {
    const res = await fetch(`${t.issuer}/.well-known/openid-configuration`);
    const meta = (await res.json()) as Record<string, unknown>;
    expect(meta['dpop_signing_alg_values_supported']).toEqual(expect.arrayContaining(['ES256']));
    const { keyPair } = await dpopKey();
    const client = await createClient(t, {
      grant_types: ['client_credentials'],
      roles: ['viewer'],
    });
    const token = await tokenRequest(
      t,
      { grant_type: 'client_credentials', scope: 'api' },
      {
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
        dpop: await proof(keyPair, `${t.issuer}/token`),
      },
    );
    expect(token.status).toBe(200);
    expect(token.res.headers.get('dpop-nonce')).toBeNull();
  });

  test('authorization code + PKCE: DPoP token type, cnf.jkt of the key; the refresh token is bound to it', async () => {
    const user = await createUser(t);
    const client = await publicSpa(t);
    const config = await discover(t, client.client_id);
    const key = await dpopKey();
    const DPoP = oidc.getDPoPHandle(config, key.keyPair);

    const tokens = await pkceSignIn(config, user, { DPoP });
    expect(tokens.token_type).toBe('dpop');
    expect(cnfOf(tokens.access_token)).toEqual({ jkt: key.jkt });
    expect(tokens.refresh_token).toBeTruthy();

    // The same key refreshes, and the new access token is bound to it too.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, {
      DPoP,
    });
    expect(refreshed.token_type).toBe('dpop');
    expect(cnfOf(refreshed.access_token)).toEqual({ jkt: key.jkt });

    // Another key, or no proof at all, cannot use the public client's refresh token.
    const other = oidc.getDPoPHandle(config, (await dpopKey()).keyPair);
    expect(
      await refusal(
        oidc.refreshTokenGrant(config, refreshed.refresh_token!, undefined, { DPoP: other }),
      ),
    ).toEqual({ error: 'invalid_grant', status: 400 });
    const bare = await tokenRequest(t, {
      grant_type: 'refresh_token',
      refresh_token: refreshed.refresh_token!,
      client_id: client.client_id,
    });
    expect(bare.status).toBe(400);
    expect(bare.body).toMatchObject({ error: 'invalid_grant' });
    // Neither refusal spent the token: its key holder still refreshes.
    const again = await oidc.refreshTokenGrant(config, refreshed.refresh_token!, undefined, {
      DPoP,
    });
    expect(cnfOf(again.access_token)).toEqual({ jkt: key.jkt });
  });

  test('client credentials: DPoP token type and cnf.jkt', async () => {
    const client = await createClient(t, {
      grant_types: ['client_credentials'],
      roles: ['editor'],
    });
    const config = await discover(t, client.client_id, client.client_secret);
    const key = await dpopKey();
    const tokens = await oidc.clientCredentialsGrant(
      config,
      { scope: 'api' },
      {
        DPoP: oidc.getDPoPHandle(config, key.keyPair),
      },
    );
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token).payload).toMatchObject({
      sub: `client:${client.client_id}`,
      cnf: { jkt: key.jkt },
    });
  });

  test('device code: DPoP token type, cnf.jkt, and a bound refresh token', async () => {
    const user = await createUser(t, ['viewer']);
    const client = await createClient(t, {
      token_endpoint_auth_method: 'none',
      grant_types: ['device_code', 'refresh_token'],
      first_party: true,
    });
    const config = await discover(t, client.client_id);
    const key = await dpopKey();
    const DPoP = oidc.getDPoPHandle(config, key.keyPair);
    const auth = await oidc.initiateDeviceAuthorization(config, {
      scope: 'openid api offline_access',
    });
    await approveDevice(t, browser(), auth.user_code, user);
    const tokens = await oidc.pollDeviceAuthorizationGrant(config, auth, undefined, { DPoP });
    expect(tokens.token_type).toBe('dpop');
    expect(cnfOf(tokens.access_token)).toEqual({ jkt: key.jkt });
    const other = oidc.getDPoPHandle(config, (await dpopKey()).keyPair);
    expect(
      await refusal(
        oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: other }),
      ),
    ).toEqual({ error: 'invalid_grant', status: 400 });
  });

  test('a client registered with dpop_bound_access_tokens must send a proof', async () => {
    const service = await createClient(t, {
      grant_types: ['client_credentials'],
      roles: ['viewer'],
      dpop_bound_access_tokens: true,
    });
    expect(service['dpop_bound_access_tokens']).toBe(true);
    const config = await discover(t, service.client_id, service.client_secret);
    expect(await refusal(oidc.clientCredentialsGrant(config, { scope: 'api' }))).toEqual({
      error: 'invalid_grant',
      status: 400,
    });
    const bound = await oidc.clientCredentialsGrant(
      config,
      { scope: 'api' },
      {
        DPoP: oidc.getDPoPHandle(config, (await dpopKey()).keyPair),
      },
    );
    expect(cnfOf(bound.access_token)?.jkt).toBeTruthy();

    const user = await createUser(t);
    const spa = await publicSpa(t, { dpop_bound_access_tokens: true });
    const spaConfig = await discover(t, spa.client_id);
    expect(await refusal(pkceSignIn(spaConfig, user))).toEqual({
      error: 'invalid_grant',
      status: 400,
    });
  });

  test('dpop_bound_access_tokens must be a boolean', async () => {
    const res = await t.admin('POST', '/admin/clients', {
      grant_types: ['client_credentials'],
      dpop_bound_access_tokens: 'yes',
    });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain('dpop_bound_access_tokens');
  });

  test('a proof for another endpoint is refused with invalid_dpop_proof', async () => {
    const client = await createClient(t, { grant_types: ['client_credentials'] });
    const { keyPair } = await dpopKey();
    const res = await tokenRequest(
      t,
      { grant_type: 'client_credentials' },
      {
        authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
        dpop: await proof(keyPair, `${t.issuer}/token/revocation`),
      },
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'invalid_dpop_proof' });
  });

  test('a replayed proof is refused with invalid_dpop_proof (RFC 9449 §5), as a refresh too', async () => {
    const client = await createClient(t, { grant_types: ['client_credentials'] });
    const { keyPair } = await dpopKey();
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    const once = await proof(keyPair, `${t.issuer}/token`);
    const send = () =>
      tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic, dpop: once });
    expect((await send()).status).toBe(200);
    const replayed = await send();
    expect({ status: replayed.status, error: replayed.body['error'] }).toEqual({
      status: 400,
      error: 'invalid_dpop_proof',
    });

    // The refresh grant checks replays on its own path.
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const key = await dpopKey();
    const tokens = await pkceSignIn(config, user, {
      DPoP: oidc.getDPoPHandle(config, key.keyPair),
    });
    const refresh = await proof(key.keyPair, `${t.issuer}/token`);
    const form = {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: spa.client_id,
    };
    expect((await tokenRequest(t, form, { dpop: refresh })).status).toBe(200);
    const again = await tokenRequest(t, form, { dpop: refresh });
    expect({ status: again.status, error: again.body['error'] }).toEqual({
      status: 400,
      error: 'invalid_dpop_proof',
    });
  });
});

describe('DPOP_NONCE=true: /token requires server-provided nonces', () => {
  let n: TestAuthServer;
  beforeAll(async () => {
    n = await startTestAuthServer({ DPOP_NONCE: 'true' });
  });
  afterAll(async () => {
    await n?.close();
  });

  test('a proof without a nonce gets use_dpop_nonce and a DPoP-Nonce; with it, tokens', async () => {
    const client = await createClient(n, { grant_types: ['client_credentials'] });
    const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    const { keyPair, jkt } = await dpopKey();
    const first = await tokenRequest(
      n,
      { grant_type: 'client_credentials' },
      { authorization: basic, dpop: await proof(keyPair, `${n.issuer}/token`) },
    );
    expect(first.status).toBe(400);
    expect(first.body).toMatchObject({ error: 'use_dpop_nonce' });
    const nonce = first.res.headers.get('dpop-nonce');
    expect(nonce).toMatch(/^[A-Za-z0-9_-]+$/);
    const second = await tokenRequest(
      n,
      { grant_type: 'client_credentials' },
      { authorization: basic, dpop: await proof(keyPair, `${n.issuer}/token`, nonce!) },
    );
    expect(second.status).toBe(200);
    expect(cnfOf(second.body.access_token)).toEqual({ jkt });
  });

  test('openid-client retries with the nonce on its own: authorization code, then refresh', async () => {
    const user = await createUser(n);
    const client = await publicSpa(n);
    const config = await discover(n, client.client_id);
    const key = await dpopKey();
    const DPoP = oidc.getDPoPHandle(config, key.keyPair);
    const tokens = await pkceSignIn(config, user, { DPoP });
    expect(cnfOf(tokens.access_token)).toEqual({ jkt: key.jkt });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, {
      DPoP,
    });
    expect(cnfOf(refreshed.access_token)).toEqual({ jkt: key.jkt });
  });

  test('requests without DPoP are unaffected', async () => {
    const client = await createClient(n, { grant_types: ['client_credentials'] });
    const config = await discover(n, client.client_id, client.client_secret);
    const tokens = await oidc.clientCredentialsGrant(config, { scope: 'api' });
    expect(tokens.token_type).toBe('bearer');
    expect(cnfOf(tokens.access_token)).toBeUndefined();
  });
});

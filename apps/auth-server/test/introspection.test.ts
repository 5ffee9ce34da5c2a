import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createSharedDenyList, type SharedDenyList } from '@portcullis/db';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  createClient,
  createUser,
  decodeJwt,
  discover,
  pkceSignIn,
  publicSpa,
  rethrow,
} from '@portcullis/testing';

let t: TestAuthServer;
// Writes as an API instance would: the auth server learns of it through the table.
let api: SharedDenyList;
beforeAll(async () => {
  t = await startTestAuthServer();
  api = createSharedDenyList({ db: t.database.db, onError: rethrow, bus: new EventEmitter() });
});
afterAll(async () => {
  await api?.close();
  await t?.close();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A resource server registered for introspection, as openid-client sees it. */
async function resourceServer(introspection = true) {
  const rs = await createClient(t, {
    grant_types: ['client_credentials'],
    ...(introspection ? { introspection: true } : {}),
  });
  return discover(t, rs.client_id, rs.client_secret);
}

async function userTokens() {
  const user = await createUser(t);
  const spa = await publicSpa(t);
  const config = await discover(t, spa.client_id);
  const tokens = await pkceSignIn(config, user);
  return { user, spa, config, tokens };
}

/** Introspects until `active` is false (the deny list is polled) or 3 s have passed. */
async function untilInactive(rs: oidc.Configuration, token: string) {
  for (let i = 0; i < 30; i++) {
    const answer = await oidc.tokenIntrospection(rs, token);
    if (!answer.active) return answer;
    await sleep(100);
  }
  return oidc.tokenIntrospection(rs, token);
}

describe('token introspection (RFC 7662)', () => {
  test('discovery lists the endpoint and its auth methods', async () => {
    const res = await fetch(`${t.issuer}/.well-known/openid-configuration`);
    const doc = (await res.json()) as Record<string, unknown>;
    expect(doc['introspection_endpoint']).toBe(`${t.issuer}/token/introspection`);
    expect(doc['introspection_endpoint_auth_methods_supported']).toEqual(
      expect.arrayContaining(['client_secret_basic', 'private_key_jwt']),
    );
  });

  test('an API access token (a JWT) is active with its claims', async () => {
    const rs = await resourceServer();
    const { user, spa, tokens } = await userTokens();
    const claims = decodeJwt(tokens.access_token).payload as Record<string, unknown>;
    const answer = await oidc.tokenIntrospection(rs, tokens.access_token);
    expect(answer).toMatchObject({
      active: true,
      iss: t.issuer,
      sub: user.id,
      client_id: spa.client_id,
      aud: t.apiAudience,
      scope: claims['scope'],
      exp: claims['exp'],
      iat: claims['iat'],
      token_type: 'Bearer',
    });
  });

  test('a DPoP-bound access token reports token_type DPoP and cnf.jkt', async () => {
    const rs = await resourceServer();
    const user = await createUser(t);
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const keyPair = await generateKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    const tokens = await pkceSignIn(config, user, { DPoP: oidc.getDPoPHandle(config, keyPair) });
    expect(await oidc.tokenIntrospection(rs, tokens.access_token)).toMatchObject({
      active: true,
      token_type: 'DPoP',
      cnf: { jkt },
    });
  });

  test('a refresh token is active, and inactive once revoked; so is its access token', async () => {
    const rs = await resourceServer();
    const { config, tokens } = await userTokens();
    expect((await oidc.tokenIntrospection(rs, tokens.refresh_token!)).active).toBe(true);
    await oidc.tokenRevocation(config, tokens.refresh_token!);
    expect(await oidc.tokenIntrospection(rs, tokens.refresh_token!)).toEqual({ active: false });
    expect(await untilInactive(rs, tokens.access_token)).toEqual({ active: false });
  });

  test('after logout everywhere the access token is inactive', async () => {
    const rs = await resourceServer();
    const { user, tokens } = await userTokens();
    expect((await oidc.tokenIntrospection(rs, tokens.access_token)).active).toBe(true);
    await api.denySubject(user.id, Date.now() / 1000, Math.floor(Date.now() / 1000) + 86_400);
    expect(await untilInactive(rs, tokens.access_token)).toEqual({ active: false });
  });

  test('a forged or foreign JWT and garbage are inactive', async () => {
    const rs = await resourceServer();
    const { tokens } = await userTokens();
    const [h, p] = tokens.access_token.split('.');
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const forged = `${h}.${b64({ ...decodeJwt(tokens.access_token).payload, scope: 'admin' })}.${'A'.repeat(86)}`;
    const unsigned = `${b64({ alg: 'none', typ: 'at+jwt' })}.${p}.`;
    for (const token of [forged, unsigned, 'not-a-token']) {
      expect(await oidc.tokenIntrospection(rs, token)).toEqual({ active: false });
    }
  });

  test('a client not registered for introspection is 403 unauthorized_client, whatever it asks', async () => {
    const rs = await resourceServer(false);
    const { tokens } = await userTokens();
    for (const token of [tokens.access_token, tokens.refresh_token!, 'garbage']) {
      const refused = await oidc.tokenIntrospection(rs, token).then(
        () => undefined,
        (error: unknown) => error as { status?: number; error?: string },
      );
      expect(refused).toMatchObject({ status: 403, error: 'unauthorized_client' });
    }
  });

  test('a wrong secret is 401 invalid_client, no credentials 400 invalid_request', async () => {
    const { tokens } = await userTokens();
    const rs = await createClient(t, { grant_types: ['client_credentials'], introspection: true });
    const introspect = (headers: Record<string, string>) =>
      fetch(`${t.issuer}/token/introspection`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ token: tokens.access_token }).toString(),
      });
    const basic = Buffer.from(`${rs.client_id}:wrong`).toString('base64');
    const wrong = await introspect({ authorization: `Basic ${basic}` });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_client' });
    const none = await introspect({});
    expect(none.status).toBe(400);
    expect(await none.json()).toMatchObject({ error: 'invalid_request' });
  });

  test('a public client cannot be registered for introspection', async () => {
    const res = await t.admin('POST', '/admin/clients', {
      token_endpoint_auth_method: 'none',
      redirect_uris: ['http://localhost:5173/callback'],
      introspection: true,
    });
    expect(res.status).toBe(422);
    expect(res.body.fields).toHaveProperty('introspection');
  });
});

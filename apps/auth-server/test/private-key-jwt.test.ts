import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  createClient,
  createUser,
  discover,
  pkceSignIn,
  REDIRECT_URI,
  tokenRequest,
} from '@portcullis/testing';
import { registerClient } from '../src/admin/api/register-client.js';
import { purgeExpired } from '../src/data/oidc-adapter.js';
import { newClientSchema } from '../src/admin/api/schemas.js';

const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

let t: TestAuthServer;
let key: { privateKey: CryptoKey; publicKey: CryptoKey; jwk: JWK };

beforeAll(async () => {
  t = await startTestAuthServer();
  const pair = await generateKeyPair('ES256', { extractable: true });
  key = { ...pair, jwk: { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' } };
});
afterAll(async () => {
  await t?.close();
});

const keyClient = (extra: Record<string, unknown> = {}) =>
  createClient(t, {
    token_endpoint_auth_method: 'private_key_jwt',
    jwks: { keys: [key.jwk] },
    grant_types: ['client_credentials'],
    roles: ['viewer'],
    ...extra,
  });

const now = () => Math.floor(Date.now() / 1000);

/** A client assertion as RFC 7523 describes it; `claims` overrides the defaults. */
function assertion(clientId: string, claims: Record<string, unknown> = {}) {
  return new SignJWT({
    iss: clientId,
    sub: clientId,
    aud: t.issuer,
    jti: randomUUID(),
    iat: now(),
    exp: now() + 60,
    ...claims,
  })
    .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
    .sign(key.privateKey);
}

const withAssertion = (server: TestAuthServer, clientId: string, jwt: string) =>
  tokenRequest(server, {
    grant_type: 'client_credentials',
    client_id: clientId,
    client_assertion_type: ASSERTION_TYPE,
    client_assertion: jwt,
  });

/** Refused with 401 invalid_client; `rule` is what its error_description must name. */
function expectRefused(res: Awaited<ReturnType<typeof tokenRequest>>, rule?: string) {
  expect(res.status).toBe(401);
  expect(res.body.error).toBe('invalid_client');
  expect(res.body.access_token).toBeUndefined();
  if (rule) expect(res.body.error_description).toContain(rule);
}

/** What Authlib's documented PrivateKeyJWT signs: aud the token endpoint, exp an hour ahead. */
const authlibShaped = (clientId: string) =>
  assertion(clientId, { aud: `${t.issuer}/token`, exp: now() + 3600 });

/** openid-client's PrivateKeyJwt with the test key gets a client-credentials token. */
async function expectClientCredentials(clientId: string) {
  const config = await discover(
    t,
    clientId,
    undefined,
    oidc.PrivateKeyJwt({ key: key.privateKey, kid: 'k1' }),
  );
  const tokens = await oidc.clientCredentialsGrant(config, { scope: 'api' });
  expect(tokens.access_token).toBeTruthy();
}

describe('private_key_jwt (RFC 7523)', () => {
  test('discovery lists the method and its asymmetric algorithms', async () => {
    const res = await fetch(`${t.issuer}/.well-known/openid-configuration`);
    const doc = (await res.json()) as Record<string, string[]>;
    expect(doc['token_endpoint_auth_methods_supported']).toContain('private_key_jwt');
    expect(doc['token_endpoint_auth_signing_alg_values_supported']).toEqual([
      'ES256',
      'PS256',
      'RS256',
    ]);
  });

  test('discovery: every *_auth_methods_supported with a JWT method has its signing algs (RFC 8414 §2)', async () => {
    const res = await fetch(`${t.issuer}/.well-known/openid-configuration`);
    const doc = (await res.json()) as Record<string, unknown>;
    const keys = Object.keys(doc).filter((k) => k.endsWith('_auth_methods_supported'));
    expect(keys).toEqual(
      expect.arrayContaining([
        'token_endpoint_auth_methods_supported',
        'introspection_endpoint_auth_methods_supported',
        'revocation_endpoint_auth_methods_supported',
      ]),
    );
    for (const key of keys) {
      const methods = doc[key] as string[];
      if (!methods.some((m) => m === 'private_key_jwt' || m === 'client_secret_jwt')) continue;
      const algs =
        doc[key.replace(/_auth_methods_supported$/, '_auth_signing_alg_values_supported')];
      expect({ key, algs }).toEqual({ key, algs: expect.arrayContaining(['ES256']) });
      expect(algs).not.toContain('none');
    }
    expect(doc['revocation_endpoint_auth_methods_supported']).toContain('private_key_jwt');
  });

  test('client_credentials with openid-client PrivateKeyJwt; no secret is issued', async () => {
    const client = await keyClient();
    expect(client.client_secret).toBeUndefined();
    expect(client['jwks']).toEqual({ keys: [key.jwk] });
    await expectClientCredentials(client.client_id);
  });

  test('client_credentials of a client whose keys are at its jwks_uri', async () => {
    const keys = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ keys: [key.jwk] }));
    });
    await new Promise<void>((resolve) => keys.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = keys.address() as AddressInfo;
      const client = await keyClient({
        jwks: undefined,
        jwks_uri: `http://127.0.0.1:${port}/jwks`,
      });
      await expectClientCredentials(client.client_id);
      // A key the client never published is refused, whatever it claims as kid.
      const stranger = await generateKeyPair('ES256');
      const forged = await new SignJWT({
        iss: client.client_id,
        sub: client.client_id,
        aud: t.issuer,
        jti: randomUUID(),
        iat: now(),
        exp: now() + 60,
      })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .sign(stranger.privateKey);
      expectRefused(await withAssertion(t, client.client_id, forged), 'signature key');
    } finally {
      keys.closeAllConnections();
      await new Promise((resolve) => keys.close(resolve));
    }
  });

  test('authorization code flow of a confidential client with PrivateKeyJwt', async () => {
    const client = await keyClient({
      grant_types: ['authorization_code', 'refresh_token'],
      redirect_uris: [REDIRECT_URI],
      roles: undefined,
      first_party: true,
    });
    const config = await discover(
      t,
      client.client_id,
      undefined,
      oidc.PrivateKeyJwt({ key: key.privateKey, kid: 'k1' }),
    );
    const user = await createUser(t);
    const tokens = await pkceSignIn(config, user);
    expect(tokens.access_token).toBeTruthy();
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).toBeTruthy();
  });

  test('a client_secret_basic client keeps working', async () => {
    const client = await createClient(t, {
      grant_types: ['client_credentials'],
      roles: ['viewer'],
    });
    const config = await discover(t, client.client_id, client.client_secret);
    expect((await oidc.clientCredentialsGrant(config)).access_token).toBeTruthy();
  });

  test('a reused jti is refused, naming replay', async () => {
    const client = await keyClient();
    const jwt = await assertion(client.client_id);
    expect((await withAssertion(t, client.client_id, jwt)).status).toBe(200);
    expectRefused(await withAssertion(t, client.client_id, jwt), 'replay');
  });

  test('the jti of a long-lived assertion is kept as long as the assertion lives', async () => {
    const client = await keyClient();
    const jwt = await assertion(client.client_id, { exp: now() + 3600 });
    expect((await withAssertion(t, client.client_id, jwt)).status).toBe(200);
    // The purge as it would run 59 minutes later: the assertion is still valid then.
    await purgeExpired(t.database.db, new Date(Date.now() + 59 * 60 * 1000));
    expectRefused(await withAssertion(t, client.client_id, jwt), 'replay');
  });

  test('an Authlib-shaped assertion (aud the token endpoint, exp +3600) is refused by default, naming the audience', async () => {
    const client = await keyClient();
    const res = await withAssertion(t, client.client_id, await authlibShaped(client.client_id));
    expectRefused(res, 'audience');
    expect(res.body.error_description).toContain(t.issuer);
  });

  test('a client opted into the legacy audience accepts the token endpoint URL or the URL called', async () => {
    const client = await keyClient({ client_assertion_legacy_audience: true });
    expect(client['client_assertion_legacy_audience']).toBe(true);
    const id = client.client_id;
    const res = await withAssertion(t, id, await authlibShaped(id));
    expect(res.status).toBe(200);
    // At the revocation endpoint, its own URL (an unknown token is revoked with 200, RFC 7009).
    const revoked = await fetch(`${t.issuer}/token/revocation`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: 'not-a-token-of-this-server',
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: await assertion(id, { aud: `${t.issuer}/token/revocation` }),
      }),
    });
    expect(revoked.status).toBe(200);
    // Another server's endpoint stays refused.
    expectRefused(
      await withAssertion(t, id, await assertion(id, { aud: 'https://other.example/token' })),
      'audience',
    );
  });

  test('exp an hour ahead with the issuer as aud is accepted', async () => {
    const client = await keyClient();
    const id = client.client_id;
    expect((await withAssertion(t, id, await assertion(id, { exp: now() + 3600 }))).status).toBe(
      200,
    );
  });

  test('a FAPI 2.0 client cannot opt into the legacy audience: 422 naming the field', async () => {
    const res = await t.admin('POST', '/admin/clients', {
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [key.jwk] },
      grant_types: ['client_credentials'],
      fapi: '2.0',
      client_assertion_legacy_audience: true,
    });
    expect(res.status).toBe(422);
    expect(res.body.fields).toEqual({
      client_assertion_legacy_audience: [expect.stringContaining('FAPI 2.0')],
    });
  });

  test('a jti used at one instance is refused at another on the same database', async () => {
    const other = await t.startInstance();
    try {
      const client = await keyClient();
      const jwt = await assertion(client.client_id);
      expect((await withAssertion(t, client.client_id, jwt)).status).toBe(200);
      expectRefused(await withAssertion(other, client.client_id, jwt));
    } finally {
      await other.close();
    }
  });

  test('one assertion sent to two instances at once is accepted once', async () => {
    const other = await t.startInstance();
    try {
      const client = await keyClient();
      await withAssertion(t, client.client_id, await assertion(client.client_id)); // warm both
      await withAssertion(other, client.client_id, await assertion(client.client_id));
      const jwt = await assertion(client.client_id);
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          withAssertion(i % 2 ? other : t, client.client_id, jwt),
        ),
      );
      expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
      for (const refused of answers.filter((a) => a.status !== 200)) expectRefused(refused);
    } finally {
      await other.close();
    }
  });

  test('aud other than the issuer identifier (RFC 7523bis) is refused, naming the audience', async () => {
    const client = await keyClient();
    for (const aud of [`${t.issuer}/token`, [t.issuer], 'https://other.example']) {
      expectRefused(
        await withAssertion(t, client.client_id, await assertion(client.client_id, { aud })),
        'audience',
      );
    }
  });

  test('an expired exp, or one beyond CLIENT_ASSERTION_MAX_LIFETIME, is refused naming the lifetime', async () => {
    const client = await keyClient();
    const id = client.client_id;
    expectRefused(
      await withAssertion(t, id, await assertion(id, { iat: now() - 600, exp: now() - 300 })),
      'lifetime',
    );
    const far = await withAssertion(t, id, await assertion(id, { exp: now() + 3600 + 60 }));
    expectRefused(far, 'lifetime');
    expect(far.body.error_description).toContain('3600 seconds');
  });

  test('an assertion under a kid the client never registered is refused naming the signature key', async () => {
    const client = await keyClient();
    const id = client.client_id;
    const stranger = await generateKeyPair('ES256');
    const jwt = await new SignJWT({ iss: id, sub: id, aud: t.issuer, jti: randomUUID() })
      .setIssuedAt()
      .setExpirationTime('1m')
      .setProtectedHeader({ alg: 'ES256', kid: 'k2' })
      .sign(stranger.privateKey);
    const res = await withAssertion(t, id, jwt);
    expectRefused(res, 'signature key');
    expect(res.body.error_description).toContain('kid');
  });

  test('an unknown client or a wrong secret says nothing more', async () => {
    const unknown = await withAssertion(t, 'nobody', await assertion('nobody'));
    expect(unknown.body).toEqual({
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
  });

  test('alg none and HS256 signed with the public key are refused', async () => {
    const client = await keyClient();
    const id = client.client_id;
    const claims = { iss: id, sub: id, aud: t.issuer, jti: randomUUID(), exp: now() + 60 };
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const unsigned = `${b64({ alg: 'none' })}.${b64(claims)}.`;
    expectRefused(await withAssertion(t, id, unsigned));

    const publicPem = new TextEncoder().encode(await exportSPKI(key.publicKey));
    const hs = await new SignJWT({ ...claims, jti: randomUUID() })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .sign(publicPem);
    expectRefused(await withAssertion(t, id, hs));
  });

  test('admin API: a private key, no keys, a plain-http jwks_uri or HS256 assertions is a clear 422 naming the field', async () => {
    const privateJwk = await exportJWK(key.privateKey);
    // [metadata, the field named, what its message says]
    const cases: [Record<string, unknown>, string, string][] = [
      [{ jwks: { keys: [privateJwk] } }, 'jwks', 'register the public key only'],
      [{ jwks: undefined }, 'jwks', 'private_key_jwt needs exactly one of jwks and jwks_uri'],
      [
        { jwks: undefined, jwks_uri: 'http://keys.example/jwks' },
        'jwks_uri',
        'must be an https URL (http only for localhost)',
      ],
      [
        { token_endpoint_auth_signing_alg: 'HS256' },
        'token_endpoint_auth_signing_alg',
        'expected one of "ES256"|"PS256"|"RS256"',
      ],
    ];
    for (const [extra, field, message] of cases) {
      const res = await t.admin('POST', '/admin/clients', {
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [key.jwk] },
        grant_types: ['client_credentials'],
        ...extra,
      });
      expect(res.status).toBe(422);
      expect(res.body.error).toBe('validation_failed');
      expect(res.body.fields).toEqual({ [field]: [expect.stringContaining(message)] });
    }
    const secretClient = await t.admin('POST', '/admin/clients', {
      grant_types: ['client_credentials'],
      jwks: { keys: [key.jwk] },
    });
    expect(secretClient.status).toBe(422);
  });

  test('in production a jwks_uri must be https, even on localhost', async () => {
    const input = newClientSchema.parse({
      token_endpoint_auth_method: 'private_key_jwt',
      jwks_uri: 'http://localhost:9/jwks',
      grant_types: ['client_credentials'],
    });
    // Refused before the client is looked at or stored.
    const register = registerClient(undefined as never, undefined as never, input, {
      httpsJwksUriOnly: true,
    });
    await expect(register).rejects.toMatchObject({
      status: 400,
      code: 'invalid_client_metadata',
      message: 'jwks_uri must be an https URL',
    });
  });

  test('admin API: a localhost http jwks_uri is accepted outside production', async () => {
    const client = await keyClient({ jwks: undefined, jwks_uri: 'http://localhost:9/jwks' });
    expect(client['jwks_uri']).toBe('http://localhost:9/jwks');
  });
});

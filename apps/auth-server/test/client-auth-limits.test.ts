import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import * as oidc from 'openid-client';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { createClient, discover, fetchFrom, REDIRECT_URI } from '@portcullis/testing';

// Failed client authentication is limited per address whatever client ids it names
// (CLIENT_AUTH_ADDRESS_LIMIT), per client from one address (CLIENT_AUTH_CLIENT_ADDRESS_LIMIT)
// and per client (CLIENT_AUTH_CLIENT_LIMIT). Without TRUST_PROXY the server trusts no
// X-Forwarded-For: each address is a real loopback source (127.0.0.x).
const REDIS_URL = process.env['REDIS_URL'];
const redisEnv = (): Record<string, string> =>
  REDIS_URL
    ? { REDIS_URL, REDIS_KEY_PREFIX: `portcullis-test-${randomBytes(6).toString('hex')}:` }
    : {};
const ENV: Record<string, string> = {
  CLIENT_AUTH_ADDRESS_LIMIT: '10',
  CLIENT_AUTH_CLIENT_ADDRESS_LIMIT: '5',
  CLIENT_AUTH_CLIENT_LIMIT: '12',
  CLIENT_AUTH_LIMIT_WINDOW: '60',
  ...redisEnv(),
};
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer(ENV);
});
afterAll(async () => {
  await t?.close();
});

let lastHost = 30;
/** A machine of its own: fetch from 127.0.0.31, .32, … */
const machine = () => fetchFrom(`127.0.0.${++lastHost}`);

const service = () =>
  createClient(t, {
    grant_types: ['client_credentials'],
    roles: ['viewer'],
    introspection: true,
  }) as Promise<{ client_id: string; client_secret: string }>;

async function post(
  from: typeof fetch,
  path: string,
  form: Record<string, string>,
  secret?: { id: string; secret: string },
  extraHeaders: Record<string, string> = {},
  server: TestAuthServer = t,
) {
  const headers: Record<string, string> = { accept: 'application/json', ...extraHeaders };
  if (secret) {
    headers['authorization'] =
      `Basic ${Buffer.from(`${secret.id}:${secret.secret}`).toString('base64')}`;
  }
  const res = await from(`${server.server.url}${path}`, {
    method: 'POST',
    headers,
    body: new URLSearchParams(form),
  });
  return {
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as Record<string, unknown>,
  };
}

const wrongSecret = (from: typeof fetch, clientId: string) =>
  post(from, '/token', { grant_type: 'client_credentials' }, { id: clientId, secret: 'wrong' });

function expectLimited(res: Awaited<ReturnType<typeof post>>) {
  expect(res.status).toBe(429);
  expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
  expect(Number(res.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  expect(res.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
}

/** openid-client from `from`'s address: what the client's own backend would run. */
async function tokensFrom(
  from: typeof fetch,
  client: { client_id: string; client_secret: string },
) {
  const config = await discover(t, client.client_id, client.client_secret);
  config[oidc.customFetch] = from;
  return oidc.clientCredentialsGrant(config, { scope: 'api' });
}

describe(`failed client authentication (${REDIS_URL ? 'redis' : 'memory'} store)`, () => {
  test('200 wrong secrets from one address: 429 with Retry-After after 5; the client keeps working from its own address', async () => {
    const client = await service();
    const attacker = machine();
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof post>> | undefined;
    for (let i = 0; i < 200; i++) {
      last = await wrongSecret(attacker, client.client_id);
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(new Set(statuses.slice(5))).toEqual(new Set([429]));
    expectLimited(last!);
    // The right secret from the refused address learns nothing and gets nothing.
    const right = await post(
      attacker,
      '/token',
      { grant_type: 'client_credentials' },
      { id: client.client_id, secret: client.client_secret },
    );
    expectLimited(right);
    const tokens = await tokensFrom(machine(), client);
    expect(tokens.access_token).toBeTruthy();
  });

  test('a client is refused everywhere only after failures from CLIENT_AUTH_CLIENT_LIMIT / CLIENT_AUTH_CLIENT_ADDRESS_LIMIT addresses', async () => {
    const client = await service();
    for (const attacker of [machine(), machine()]) {
      for (let i = 0; i < 20; i++) await wrongSecret(attacker, client.client_id);
    }
    // 10 failures counted for the client (5 per address): a third address still gets in.
    expect((await tokensFrom(machine(), client)).access_token).toBeTruthy();
    const third = machine();
    expect((await wrongSecret(third, client.client_id)).status).toBe(401);
    expect((await wrongSecret(third, client.client_id)).status).toBe(401);
    expectLimited(await wrongSecret(third, client.client_id));
    await expect(tokensFrom(machine(), client)).rejects.toMatchObject({ status: 429 });
  });

  test('a burst of the client’s own concurrent requests is never refused: only failures count', async () => {
    const client = await service();
    const own = machine();
    const replies = await Promise.all(
      Array.from({ length: 30 }, () =>
        post(
          own,
          '/token',
          { grant_type: 'client_credentials' },
          { id: client.client_id, secret: client.client_secret },
        ),
      ),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(30).fill(200));
  });

  test('a success clears the client’s failures from its address', async () => {
    const client = await service();
    const own = machine();
    // Without the reset the second round's second failure would be the client's sixth there.
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 4; i++) {
        expect((await wrongSecret(own, client.client_id)).status).toBe(401);
      }
      expect((await tokensFrom(own, client)).access_token).toBeTruthy();
    }
  });

  test('wrong secrets for many client ids, unknown ones too, from one address: 429 after CLIENT_AUTH_ADDRESS_LIMIT; the clients keep working elsewhere', async () => {
    const clients = [await service(), await service()];
    const attacker = machine();
    const ids = [
      ...clients.map((c) => c.client_id),
      ...Array.from({ length: 8 }, () => `unknown-${randomUUID()}`),
    ];
    const answers = [];
    for (const id of ids) answers.push(await wrongSecret(attacker, id));
    expect(answers.map((a) => [a.status, a.body['error']])).toEqual(
      Array(10).fill([401, 'invalid_client']),
    );
    expectLimited(await wrongSecret(attacker, `unknown-${randomUUID()}`));
    // The address is refused whatever it names, a client's right secret included.
    const right = await post(
      attacker,
      '/token',
      { grant_type: 'client_credentials' },
      { id: clients[0]!.client_id, secret: clients[0]!.client_secret },
    );
    expectLimited(right);
    // Each client took one failure: from another address both still get tokens.
    for (const client of clients) {
      expect((await tokensFrom(machine(), client)).access_token).toBeTruthy();
    }
  });

  test('X-Forwarded-For is not trusted without TRUST_PROXY: rotating it does not escape the limit', async () => {
    const client = await service();
    const attacker = machine();
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      const res = await post(
        attacker,
        '/token',
        { grant_type: 'client_credentials' },
        { id: client.client_id, secret: 'wrong' },
        { 'x-forwarded-for': `203.0.113.${i + 1}` },
      );
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });

  test('every endpoint that authenticates clients counts: introspection, revocation, PAR, device authorization, token', async () => {
    const client = await service();
    const attacker = machine();
    const wrong = { id: client.client_id, secret: 'wrong' };
    const answers = [
      await post(attacker, '/token/introspection', { token: 'x' }, wrong),
      await post(attacker, '/token/revocation', { token: 'x' }, wrong),
      await post(
        attacker,
        '/request',
        {
          response_type: 'code',
          redirect_uri: REDIRECT_URI,
          scope: 'openid',
          code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
          code_challenge_method: 'S256',
        },
        wrong,
      ),
      await post(attacker, '/device/auth', { scope: 'openid' }, wrong),
      await post(attacker, '/token', { grant_type: 'client_credentials' }, wrong),
    ];
    expect(answers.map((a) => [a.status, a.body['error']])).toEqual(
      Array(5).fill([401, 'invalid_client']),
    );
    expectLimited(await post(attacker, '/token/introspection', { token: 'x' }, wrong));
    expectLimited(await post(attacker, '/device/auth', { scope: 'openid' }, wrong));
  });

  test('private_key_jwt: assertions signed with another key are counted', async () => {
    const registered = await generateKeyPair('ES256', { extractable: true });
    const other = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(registered.publicKey)), kid: 'k1', alg: 'ES256' };
    const client = await createClient(t, {
      token_endpoint_auth_method: 'private_key_jwt',
      jwks: { keys: [jwk] },
      grant_types: ['client_credentials'],
      roles: ['viewer'],
    });
    const assertion = (key: CryptoKey) => {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({
        iss: client.client_id,
        sub: client.client_id,
        aud: t.issuer,
        jti: randomUUID(),
        iat: now,
        exp: now + 60,
      })
        .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
        .sign(key);
    };
    const withAssertion = async (from: typeof fetch, key: CryptoKey) =>
      post(from, '/token', {
        grant_type: 'client_credentials',
        client_id: client.client_id,
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: await assertion(key),
      });
    const attacker = machine();
    for (let i = 0; i < 5; i++) {
      const res = await withAssertion(attacker, other.privateKey);
      expect([res.status, res.body['error']]).toEqual([401, 'invalid_client']);
    }
    expectLimited(await withAssertion(attacker, other.privateKey));
    expectLimited(await withAssertion(attacker, registered.privateKey));
    const own = await withAssertion(machine(), registered.privateKey);
    expect(own.status).toBe(200);
    expect(own.body['access_token']).toBeTruthy();
  });
});

describe('behind a proxy (TRUST_PROXY=true)', () => {
  let proxied: TestAuthServer;
  beforeAll(async () => {
    proxied = await startTestAuthServer({ ...ENV, ...redisEnv(), TRUST_PROXY: 'true' });
  });
  afterAll(async () => {
    await proxied?.close();
  });

  /** A request as the proxy forwards it: every one comes from the proxy's own address. */
  const viaProxy = (forwardedFor: string, client: { client_id: string }, secret: string) =>
    post(
      fetch,
      '/token',
      { grant_type: 'client_credentials' },
      { id: client.client_id, secret },
      { 'x-forwarded-for': forwardedFor },
      proxied,
    );

  test('the right-most X-Forwarded-For entry is the address limits count: one client behind the proxy cannot lock out another', async () => {
    const client = (await createClient(proxied, {
      grant_types: ['client_credentials'],
      roles: ['viewer'],
    })) as { client_id: string; client_secret: string };
    // The attacker writes whatever it likes to the left; the proxy appends its address.
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      statuses.push((await viaProxy(`198.51.100.${i}, 203.0.113.7`, client, 'wrong')).status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
    expectLimited(await viaProxy('203.0.113.7', client, client.client_secret));
    // Another client machine behind the same proxy still gets tokens.
    const other = await viaProxy('203.0.113.8', client, client.client_secret);
    expect(other.status).toBe(200);
    expect(other.body['access_token']).toBeTruthy();
  });
});

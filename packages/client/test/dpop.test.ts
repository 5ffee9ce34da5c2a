import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify } from 'jose';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  approveDevice,
  browser,
  browserLogin,
  createClient,
  createUser,
  publicSpa,
  REDIRECT_URI,
} from '@portcullis/testing';
import {
  clientCredentials,
  createDpopKey,
  createPkcePair,
  createPortcullisClient,
  createState,
  buildAuthorizeUrl,
  deviceAuthorization,
  exchangeCode,
  OAuthError,
  pollDeviceToken,
  portcullisEndpoints,
  refreshToken,
  type DpopKey,
} from '../src/index.js';
import { json, startServer, type TestServer } from './server.js';

const ath = (token: string) => createHash('sha256').update(token).digest('base64url');
const jktOf = (accessToken: string) =>
  (
    JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString()) as {
      cnf?: { jkt?: string };
    }
  ).cnf?.jkt;

/** Verifies a proof as a server would (signature by its embedded key, typ) and returns it. */
async function readProof(proof: string | string[] | undefined) {
  expect(typeof proof).toBe('string');
  const { payload, protectedHeader } = await jwtVerify(proof as string, EmbeddedJWK, {
    typ: 'dpop+jwt',
    algorithms: ['ES256'],
  });
  return { payload, header: protectedHeader };
}

describe('createDpopKey', () => {
  it('makes a non-extractable ES256 key whose thumbprint is the RFC 7638 one', async () => {
    const key = await createDpopKey();
    expect(key.keyPair.privateKey.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('pkcs8', key.keyPair.privateKey)).rejects.toThrow();
    expect(key.thumbprint).toBe(await calculateJwkThumbprint(key.publicJwk));
    // An existing pair (as read back from IndexedDB) keeps its thumbprint.
    expect((await createDpopKey({ keyPair: key.keyPair })).thumbprint).toBe(key.thumbprint);
  });

  it('signs proofs with htm, htu without query or fragment, a fresh jti, iat and ath', async () => {
    const key = await createDpopKey();
    const url = 'https://api.example.test/orders?limit=5#top';
    const a = await readProof(await key.proof('get', url, { accessToken: 'tok' }));
    const b = await readProof(await key.proof('GET', url));
    expect(a.header).toMatchObject({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk });
    expect(a.payload).toMatchObject({
      htm: 'GET',
      htu: 'https://api.example.test/orders',
      ath: ath('tok'),
    });
    expect(Math.abs(Number(a.payload.iat) - Date.now() / 1000)).toBeLessThan(60);
    expect(a.payload.jti).not.toBe(b.payload.jti);
    expect(b.payload.ath).toBeUndefined();
    expect(b.payload.nonce).toBeUndefined();
  });
});

describe('API calls with DPoP (scripted server)', () => {
  let server: TestServer;
  afterEach(() => server?.close());

  it('sends Authorization: DPoP and a proof bound to the token; retries once with a new nonce', async () => {
    server = await startServer(async (req, res, { n }) => {
      if (n === 1) {
        json(
          res,
          401,
          { error: 'use_dpop_nonce' },
          {
            'WWW-Authenticate': 'DPoP error="use_dpop_nonce", algs="ES256"',
            'DPoP-Nonce': 'n-1',
          },
        );
        return;
      }
      json(res, 200, { items: [] }, { 'DPoP-Nonce': 'n-2' });
    });
    let refreshes = 0;
    const client = createPortcullisClient({
      baseUrl: server.url,
      accessToken: 'at-1',
      dpop: true,
      refresh: async () => {
        refreshes++;
        return undefined;
      },
    });
    await client.orders.list({ limit: 5 });
    await client.orders.list({ limit: 6 });
    expect(refreshes).toBe(0);
    const key = (await client.dpopKey())!;
    const proofs = await Promise.all(server.requests.map((r) => readProof(r.headers.dpop)));
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      'DPoP at-1',
      'DPoP at-1',
      'DPoP at-1',
    ]);
    for (const { payload, header } of proofs) {
      expect(payload).toMatchObject({ htm: 'GET', htu: `${server.url}/orders`, ath: ath('at-1') });
      expect(header.jwk).toEqual(key.publicJwk);
    }
    // The first has no nonce; the retry carries the one the 401 gave; later calls the latest.
    expect(proofs.map((p) => p.payload.nonce)).toEqual([undefined, 'n-1', 'n-2']);
  });

  it('a second use_dpop_nonce is not retried again: the 401 goes to the refresh path', async () => {
    server = await startServer((_req, res, { n }) =>
      json(
        res,
        401,
        { error: 'use_dpop_nonce' },
        { 'WWW-Authenticate': 'DPoP error="use_dpop_nonce"', 'DPoP-Nonce': `n-${n}` },
      ),
    );
    let refreshes = 0;
    const client = createPortcullisClient({
      baseUrl: server.url,
      accessToken: 'at-1',
      dpop: await createDpopKey(),
      refresh: async () => {
        refreshes++;
        return undefined;
      },
    });
    await expect(client.orders.list()).rejects.toMatchObject({ code: 'unauthorized' });
    expect(server.requests).toHaveLength(2);
    expect(refreshes).toBe(1);
  });

  it('the event stream is proven too', async () => {
    server = await startServer((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const client = createPortcullisClient({ baseUrl: server.url, accessToken: 'at-s', dpop: true });
    for await (const event of client.stream()) void event;
    const { payload } = await readProof(server.requests[0]?.headers.dpop);
    expect(server.requests[0]?.headers.authorization).toBe('DPoP at-s');
    expect(payload).toMatchObject({ htm: 'GET', htu: `${server.url}/stream`, ath: ath('at-s') });
  });
});

describe('token requests with DPoP (the real authorization server)', () => {
  let t: TestAuthServer;
  let n: TestAuthServer;
  beforeAll(async () => {
    t = await startTestAuthServer({}, { deviceIntervalSeconds: 1 });
    n = await startTestAuthServer({ DPOP_NONCE: 'true' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await n?.close();
  });

  /** Authorization code + PKCE through the login pages, exchanged with `key`. */
  async function signIn(s: TestAuthServer, key: DpopKey) {
    const user = await createUser(s);
    const client = await publicSpa(s);
    const pkce = await createPkcePair();
    const state = createState();
    const url = buildAuthorizeUrl({
      authUrl: s.issuer,
      clientId: client.client_id,
      redirectUri: REDIRECT_URI,
      scope: 'openid offline_access api',
      state,
      codeChallenge: pkce.codeChallenge,
      resource: s.apiAudience,
    });
    const callback = await browserLogin(url, user);
    const options = {
      tokenUrl: portcullisEndpoints(s.issuer).tokenEndpoint,
      clientId: client.client_id,
      resource: s.apiAudience,
      dpop: key,
    };
    const tokens = await exchangeCode({
      ...options,
      code: callback.searchParams.get('code')!,
      redirectUri: REDIRECT_URI,
      codeVerifier: pkce.codeVerifier,
    });
    return { tokens, options };
  }

  it('authorization code and refresh: bound to the key (cnf.jkt, token_type DPoP); another key is refused', async () => {
    const key = await createDpopKey();
    const { tokens, options } = await signIn(t, key);
    expect(tokens.token_type).toBe('DPoP');
    expect(jktOf(tokens.access_token)).toBe(key.thumbprint);
    const refreshed = await refreshToken({ ...options, refreshToken: tokens.refresh_token! });
    expect(jktOf(refreshed.access_token)).toBe(key.thumbprint);
    const stolen = refreshToken({
      ...options,
      dpop: await createDpopKey(),
      refreshToken: refreshed.refresh_token!,
    });
    await expect(stolen).rejects.toBeInstanceOf(OAuthError);
    await expect(stolen).rejects.toMatchObject({ error: 'invalid_grant', status: 400 });
  });

  it('client credentials and device code are bound too', async () => {
    const key = await createDpopKey();
    const service = await createClient(t, { grant_types: ['client_credentials'] });
    const tokenUrl = portcullisEndpoints(t.issuer).tokenEndpoint;
    const cc = await clientCredentials({
      tokenUrl,
      clientId: service.client_id,
      clientSecret: service.client_secret!,
      scope: 'api',
      dpop: key,
    });
    expect(jktOf(cc.access_token)).toBe(key.thumbprint);

    const user = await createUser(t, ['viewer']);
    const device = await createClient(t, {
      token_endpoint_auth_method: 'none',
      grant_types: ['device_code', 'refresh_token'],
      first_party: true,
    });
    const auth = await deviceAuthorization({
      deviceAuthorizationUrl: portcullisEndpoints(t.issuer).deviceAuthorizationEndpoint,
      clientId: device.client_id,
      scope: 'api offline_access',
    });
    await approveDevice(t, browser(), auth.user_code, user);
    const tokens = await pollDeviceToken({
      tokenUrl,
      clientId: device.client_id,
      deviceCode: auth.device_code,
      interval: auth.interval ?? 1,
      dpop: key,
    });
    expect(tokens.token_type).toBe('DPoP');
    expect(jktOf(tokens.access_token)).toBe(key.thumbprint);
  });

  it('DPOP_NONCE=true: use_dpop_nonce is answered by one retry with the nonce', async () => {
    const key = await createDpopKey();
    const seen: (string | null)[] = [];
    const recording: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      seen.push(new Headers(init?.headers).get('DPoP') && String(res.status));
      return res;
    };
    const service = await createClient(n, { grant_types: ['client_credentials'] });
    const options = {
      tokenUrl: portcullisEndpoints(n.issuer).tokenEndpoint,
      clientId: service.client_id,
      clientSecret: service.client_secret!,
      dpop: key,
      fetch: recording,
    };
    const first = await clientCredentials(options);
    expect(jktOf(first.access_token)).toBe(key.thumbprint);
    expect(seen).toEqual(['400', '200']);
    // The nonce is remembered: the next request needs no retry while it is valid.
    await clientCredentials(options);
    expect(seen).toEqual(['400', '200', '200']);
  });

  it('a proof made elsewhere (a string) is forwarded as is; use_dpop_nonce comes back with the nonce', async () => {
    const key = await createDpopKey();
    const service = await createClient(n, { grant_types: ['client_credentials'] });
    const tokenUrl = portcullisEndpoints(n.issuer).tokenEndpoint;
    const base = { tokenUrl, clientId: service.client_id, clientSecret: service.client_secret! };
    const refused = await clientCredentials({
      ...base,
      dpop: await key.proof('POST', tokenUrl),
    }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ error: 'use_dpop_nonce', dpopNonce: expect.any(String) });
    const nonce = (refused as OAuthError).dpopNonce!;
    const tokens = await clientCredentials({
      ...base,
      dpop: await key.proof('POST', tokenUrl, { nonce }),
    });
    expect(jktOf(tokens.access_token)).toBe(key.thumbprint);
  });
});

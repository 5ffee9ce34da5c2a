/**
 * DPoP (RFC 9449) at the API, end to end: the REAL auth server issues DPoP-bound tokens
 * to openid-client 6 (client credentials and Authorization Code + PKCE), the API checks
 * each request's proof. Bad proofs are crafted with jose; each refusal is asserted by
 * what the client sees (status, WWW-Authenticate) and by the reason the API logs.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import {
  calculateJwkThumbprint,
  CompactSign,
  exportJWK,
  generateKeyPair,
  type CryptoKey,
  type JWK,
} from 'jose';
import * as oidc from 'openid-client';
import { pino } from 'pino';
import { createMemoryReplayStore, type DpopReplayStore } from '@portcullis/claims';
import { approveDevice, browser, pkceSignIn, PUBLIC_SPA_METADATA } from '@portcullis/testing';
import { parseApiConfig, startApiServer, type RunningApiServer } from '../src/index.js';
import { REDIS_URL } from './helpers/credentials.js';
import { claimsOf, startTestApi, type AuthServerTestApi } from './helpers/harness.js';
import { startTcpProxy } from '@portcullis/db/testing';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const STORE = REDIS_URL ? 'redis' : 'memory';
/** One key prefix per run, so parallel runs sharing a Redis never see each other's jtis. */
const REDIS_ENV: Record<string, string> = REDIS_URL
  ? { REDIS_URL, REDIS_KEY_PREFIX: `portcullis-test-${randomBytes(6).toString('hex')}:` }
  : {};

/** Why the API refused each request: the `code` of its 'access refused' log lines. */
const refusals: string[] = [];
const logger = pino(
  { level: 'info' },
  new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) {
        if (!line) continue;
        const entry = JSON.parse(line) as { msg?: string; code?: string };
        if (entry.msg === 'access refused' && entry.code) refusals.push(entry.code);
      }
      done();
    },
  }),
);

let api: AuthServerTestApi;
const servers: RunningApiServer[] = [];
let service: oidc.Configuration;

beforeAll(async () => {
  api = await startTestApi({ env: REDIS_ENV, deps: { logger } });
  service = await serviceClient(['admin']);
});
afterAll(async () => {
  for (const server of servers) await server.close();
  await api?.close();
});

async function admin(method: string, pathname: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${api.auth.adminUrl}${pathname}`, {
    method,
    headers: {
      authorization: `Bearer ${api.auth.adminToken}`,
      'content-type': 'application/json',
    },
    body: body === undefined ? null : JSON.stringify(body),
  });
  const json = (await res.json()) as Json;
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

const discover = (clientId: string, secret?: string) =>
  oidc.discovery(
    new URL(api.auth.issuer),
    clientId,
    secret,
    secret ? oidc.ClientSecretBasic(secret) : oidc.None(),
    { execute: [oidc.allowInsecureRequests] },
  );

async function serviceClient(roles: string[]): Promise<oidc.Configuration> {
  const client = await admin('POST', '/admin/clients', {
    client_id: `dpop-svc-${randomUUID().slice(0, 8)}`,
    grant_types: ['client_credentials'],
    roles,
  });
  return discover(client.client_id, client.client_secret);
}

/** Another API instance on the same database (and Redis, when set). */
async function instance(
  env: Record<string, string> = {},
  deps: { dpopReplay?: DpopReplayStore } = {},
): Promise<RunningApiServer> {
  const server = await startApiServer(
    parseApiConfig({
      NODE_ENV: 'test',
      API_PORT: '0',
      ISSUER: api.config.issuer,
      API_AUDIENCE: api.config.audience,
      JWKS_URL: api.config.jwksUrl,
      ...REDIS_ENV,
      ...env,
    }),
    { db: api.database.db, logger, ...deps },
  );
  servers.push(server);
  return server;
}

interface ProofKey {
  keyPair: oidc.CryptoKeyPair;
  jwk: JWK;
  alg: string;
}

async function newKey(alg = 'ES256'): Promise<ProofKey> {
  const keyPair = await oidc.randomDPoPKeyPair(alg);
  const { kty, crv, x, y, n, e } = await exportJWK(keyPair.publicKey);
  const jwk = Object.fromEntries(
    Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined),
  ) as JWK;
  return { keyPair, jwk, alg };
}

/** A DPoP-bound access token from the real auth server (client credentials). */
async function boundToken(key: ProofKey, config = service) {
  const tokens = await oidc.clientCredentialsGrant(
    config,
    { scope: 'api' },
    { DPoP: oidc.getDPoPHandle(config, key.keyPair) },
  );
  return tokens;
}

const ath = (token: string) => createHash('sha256').update(token).digest('base64url');
const nowSec = () => Math.floor(Date.now() / 1000);
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

interface ProofClaims {
  htm?: string;
  htu: string;
  iat?: number;
  jti?: string;
  ath?: string;
  nonce?: string;
}

/** A proof signed by `key` (or `signer`), header and claims as given over the defaults. */
async function proof(
  key: ProofKey,
  claims: ProofClaims,
  header: Record<string, unknown> = {},
  signer: CryptoKey | Uint8Array = key.keyPair.privateKey,
): Promise<string> {
  const payload = { htm: 'GET', iat: nowSec(), jti: randomUUID(), ...claims };
  return new CompactSign(new TextEncoder().encode(JSON.stringify(payload)))
    .setProtectedHeader({ typ: 'dpop+jwt', alg: key.alg, jwk: key.jwk, ...header } as never)
    .sign(signer);
}

interface Reply {
  status: number;
  headers: Headers;
  body: Json;
}

/** One request; `proofs` go out as that many separate `DPoP` header lines. */
function send(
  base: string,
  path: string,
  options: {
    method?: string;
    authorization?: string;
    proofs?: string[];
    headers?: Record<string, string>;
  },
): Promise<Reply> {
  // Headers given as a list go out as they are: Node adds no Host of its own.
  const raw: string[] = options.headers?.['host'] ? [] : ['Host', new URL(base).host];
  if (options.authorization) raw.push('Authorization', options.authorization);
  for (const p of options.proofs ?? []) raw.push('DPoP', p);
  for (const [name, value] of Object.entries(options.headers ?? {})) raw.push(name, value);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${base}${path}`,
      { method: options.method ?? 'GET', headers: raw },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            for (const v of Array.isArray(value) ? value : [value ?? '']) headers.append(name, v);
          }
          resolve({ status: res.statusCode ?? 0, headers, body: text ? JSON.parse(text) : null });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const dpopGet = (base: string, path: string, token: string, proofs: string[]) =>
  send(base, path, { authorization: `DPoP ${token}`, proofs });

/** The reply is a 401 DPoP refusal `error`, logged with `code`. */
function expectRefused(reply: Reply, error: string, code: string, scheme = 'DPoP') {
  expect({ status: reply.status, body: reply.body }).toEqual({
    status: 401,
    body: { error, message: expect.any(String) },
  });
  const challenge = reply.headers.get('www-authenticate') ?? '';
  expect(challenge.startsWith(`${scheme} realm="portcullis", error="${error}"`)).toBe(true);
  // Both schemes are offered, DPoP with its algorithms.
  expect(challenge).toMatch(/(^|, )Bearer realm="portcullis"/);
  expect(challenge).toMatch(/DPoP realm="portcullis".*algs="[^"]*ES256[^"]*"/);
  expect(refusals.at(-1)).toBe(code);
}

describe('DPoP-bound tokens from the real auth server', () => {
  test('client credentials: openid-client reads and writes the API with DPoP; the token carries cnf.jkt', async () => {
    const key = await newKey();
    const tokens = await boundToken(key);
    expect(tokens.token_type).toBe('dpop');
    expect(claimsOf(tokens.access_token)['cnf']).toEqual({
      jkt: await calculateJwkThumbprint(key.jwk),
    });
    const handle = oidc.getDPoPHandle(service, key.keyPair);
    const created = await oidc.fetchProtectedResource(
      service,
      tokens.access_token,
      new URL(`${api.url}/orders`),
      'POST',
      JSON.stringify({ customer: 'DPoP Ltd', amount: 1200, currency: 'EUR' }),
      new Headers({ 'content-type': 'application/json' }),
      { DPoP: handle },
    );
    expect(created.status).toBe(201);
    const order = (await created.json()) as Json;
    const get = (url: string) =>
      oidc.fetchProtectedResource(
        service,
        tokens.access_token,
        new URL(url),
        'GET',
        undefined,
        undefined,
        {
          DPoP: handle,
        },
      );
    for (let i = 0; i < 3; i++) {
      const read = await get(`${api.url}/orders/${order.id}`);
      expect(read.status).toBe(200);
      expect(((await read.json()) as Json).id).toBe(order.id);
    }
    // A query is not part of htu: openid-client leaves it out, the API ignores it.
    const listed = await get(`${api.url}/orders?page=1`);
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as Json).items).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: order.id })]),
    );
  });

  test('authorization code + PKCE: a user token bound to the browser key writes an order as its user', async () => {
    const key = await newKey();
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const email = `dpop-${randomUUID().slice(0, 8)}@example.com`;
    await admin('POST', '/admin/users', { email, password, roles: ['editor'] });
    const spa = await admin('POST', '/admin/clients', {
      client_id: `dpop-spa-${randomUUID().slice(0, 8)}`,
      ...PUBLIC_SPA_METADATA,
    });
    const config = await discover(spa.client_id);
    const handle = oidc.getDPoPHandle(config, key.keyPair);
    const tokens = await pkceSignIn(
      config,
      { email, password },
      { scope: 'openid api', resource: api.config.audience, DPoP: handle },
    );
    expect(tokens.token_type).toBe('dpop');
    const created = await oidc.fetchProtectedResource(
      config,
      tokens.access_token,
      new URL(`${api.url}/orders`),
      'POST',
      JSON.stringify({ customer: 'DPoP Ltd', amount: 990, currency: 'EUR' }),
      new Headers({ 'content-type': 'application/json' }),
      { DPoP: handle },
    );
    expect(created.status).toBe(201);
    const order = (await created.json()) as Json;
    expect(order.userId).toBe(claimsOf(tokens.access_token)['sub']);
    // The same token as a plain bearer token: refused.
    const bearer = await send(api.url, '/orders', {
      authorization: `Bearer ${tokens.access_token}`,
    });
    expectRefused(bearer, 'invalid_token', 'token_bound', 'Bearer');
    // Refresh with the same key: the new access token is bound to it and reads the order.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, {
      DPoP: handle,
    });
    expect(refreshed.token_type).toBe('dpop');
    expect(claimsOf(refreshed.access_token)['cnf']).toEqual(claimsOf(tokens.access_token)['cnf']);
    const read = await oidc.fetchProtectedResource(
      config,
      refreshed.access_token,
      new URL(`${api.url}/orders/${order.id}`),
      'GET',
      undefined,
      undefined,
      { DPoP: handle },
    );
    expect(read.status).toBe(200);
  });

  test('device code: the device key binds the token, which reads the API', async () => {
    const key = await newKey();
    const password = `pw-${randomBytes(8).toString('hex')}`;
    const email = `dpop-device-${randomUUID().slice(0, 8)}@example.com`;
    await admin('POST', '/admin/users', { email, password, roles: ['viewer'] });
    const device = await admin('POST', '/admin/clients', {
      client_id: `dpop-device-${randomUUID().slice(0, 8)}`,
      token_endpoint_auth_method: 'none',
      grant_types: ['device_code', 'refresh_token'],
      first_party: true,
    });
    const config = await discover(device.client_id);
    const handle = oidc.getDPoPHandle(config, key.keyPair);
    const auth = await oidc.initiateDeviceAuthorization(config, { scope: 'openid api' });
    await approveDevice({ issuer: api.auth.issuer }, browser(), auth.user_code, {
      email,
      password,
    });
    const tokens = await oidc.pollDeviceAuthorizationGrant(config, auth, undefined, {
      DPoP: handle,
    });
    expect(tokens.token_type).toBe('dpop');
    expect(claimsOf(tokens.access_token)['cnf']).toEqual({
      jkt: await calculateJwkThumbprint(key.jwk),
    });
    const listed = await oidc.fetchProtectedResource(
      config,
      tokens.access_token,
      new URL(`${api.url}/orders`),
      'GET',
      undefined,
      undefined,
      { DPoP: handle },
    );
    expect(listed.status).toBe(200);
  });
});

describe(`each refusal by its error code (${STORE} replay store)`, () => {
  let key: ProofKey;
  let token: string;
  let htu: string;
  const good = (claims: Partial<ProofClaims> = {}, header: Record<string, unknown> = {}) =>
    proof(key, { htu, ath: ath(token), ...claims }, header);

  beforeAll(async () => {
    key = await newKey();
    token = (await boundToken(key)).access_token;
    htu = `${api.url}/orders`;
  });

  test('a valid proof is accepted once; the same proof again is a replay', async () => {
    const once = await good();
    expect((await dpopGet(api.url, '/orders', token, [once])).status).toBe(200);
    expectRefused(
      await dpopGet(api.url, '/orders', token, [once]),
      'invalid_dpop_proof',
      'dpop_proof_replayed',
    );
  });

  (REDIS_URL ? test : test.skip)(
    `a proof used on one instance is refused on another${REDIS_URL ? '' : " (skipped: REDIS_URL not set; the in-memory store is one instance's)"}`,
    async () => {
      const second = await instance();
      const once = await good();
      expect((await dpopGet(api.url, '/orders', token, [once])).status).toBe(200);
      // htu names the first instance: the replay is refused for the replay, not the URL.
      const again = await send(second.url, '/orders', {
        authorization: `DPoP ${token}`,
        proofs: [once],
        headers: { host: new URL(api.url).host },
      });
      expectRefused(again, 'invalid_dpop_proof', 'dpop_proof_replayed');
    },
  );

  test('the cached token still needs a good proof on every request', async () => {
    expect((await dpopGet(api.url, '/orders', token, [await good()])).status).toBe(200);
    expectRefused(
      await dpopGet(api.url, '/orders', token, [await good({ htm: 'POST' })]),
      'invalid_dpop_proof',
      'dpop_proof_mismatch',
    );
    expectRefused(
      await dpopGet(api.url, '/orders', token, []),
      'invalid_dpop_proof',
      'dpop_proof_missing',
    );
  });

  test('a proof for another method, URL, or host', async () => {
    for (const claims of [
      { htm: 'POST' },
      { htm: 'get' },
      { htu: `${api.url}/users/me` },
      { htu: `${api.url}/orders/` },
      { htu: htu.replace('127.0.0.1', 'localhost') },
      { htu: `https://api.example.test/orders` },
    ]) {
      expectRefused(
        await dpopGet(api.url, '/orders', token, [await good(claims)]),
        'invalid_dpop_proof',
        'dpop_proof_mismatch',
      );
    }
  });

  test('a stale or future iat (beyond the 60 s window plus 30 s tolerance)', async () => {
    expect(
      (await dpopGet(api.url, '/orders', token, [await good({ iat: nowSec() - 85 })])).status,
    ).toBe(200);
    for (const iat of [nowSec() - 95, nowSec() + 95]) {
      expectRefused(
        await dpopGet(api.url, '/orders', token, [await good({ iat })]),
        'invalid_dpop_proof',
        'dpop_proof_stale',
      );
    }
  });

  test('a wrong or missing ath', async () => {
    expectRefused(
      await dpopGet(api.url, '/orders', token, [await good({ ath: ath(`${token}x`) })]),
      'invalid_dpop_proof',
      'dpop_proof_mismatch',
    );
    const { ath: _omitted, ...claims } = { htu, ath: '' };
    expectRefused(
      await dpopGet(api.url, '/orders', token, [await proof(key, claims)]),
      'invalid_dpop_proof',
      'dpop_proof_mismatch',
    );
  });

  test('a proof by a key other than cnf.jkt', async () => {
    const other = await newKey();
    expectRefused(
      await dpopGet(api.url, '/orders', token, [await proof(other, { htu, ath: ath(token) })]),
      'invalid_dpop_proof',
      'dpop_key_mismatch',
    );
  });

  test('a bound token as Bearer, with or without a proof', async () => {
    for (const proofs of [[], [await good()]]) {
      expectRefused(
        await send(api.url, '/orders', { authorization: `Bearer ${token}`, proofs }),
        'invalid_token',
        'token_bound',
        'Bearer',
      );
    }
  });

  test('an unbound token with a proof', async () => {
    const unbound = await api.clientToken(['admin']);
    expect(claimsOf(unbound)['cnf']).toBeUndefined();
    const reply = await dpopGet(api.url, '/orders', unbound, [
      await proof(key, { htu, ath: ath(unbound) }),
    ]);
    expectRefused(reply, 'invalid_token', 'token_not_bound');
    // As Bearer it works, as before.
    expect((await send(api.url, '/orders', { authorization: `Bearer ${unbound}` })).status).toBe(
      200,
    );
  });

  test('alg none, HS256, a private key in jwk, no typ', async () => {
    const payload = { htm: 'GET', htu, iat: nowSec(), jti: randomUUID(), ath: ath(token) };
    const none = `${b64({ typ: 'dpop+jwt', alg: 'none', jwk: key.jwk })}.${b64(payload)}.`;
    const secret = randomBytes(32);
    const hs256 = await proof(key, { htu, ath: ath(token) }, { alg: 'HS256' }, secret);
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const privateJwk = await exportJWK(privateKey);
    const withPrivate = await proof(key, { htu, ath: ath(token) }, { jwk: privateJwk }, privateKey);
    const noTyp = await good({}, { typ: undefined });
    const jwtTyp = await good({}, { typ: 'JWT' });
    for (const bad of [none, hs256, withPrivate, noTyp, jwtTyp, 'not-a-jwt']) {
      expectRefused(
        await dpopGet(api.url, '/orders', token, [bad]),
        'invalid_dpop_proof',
        'dpop_proof_invalid',
      );
    }
  });

  test('two DPoP headers, as two lines or joined in one', async () => {
    const [a, b] = [await good(), await good()];
    expectRefused(
      await dpopGet(api.url, '/orders', token, [a, b]),
      'invalid_dpop_proof',
      'dpop_proof_multiple',
    );
    expectRefused(
      await dpopGet(api.url, '/orders', token, [`${a}, ${b}`]),
      'invalid_dpop_proof',
      'dpop_proof_multiple',
    );
  });

  test('without a credential, the 401 offers both schemes', async () => {
    const reply = await send(api.url, '/orders', {});
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe(
      'Bearer realm="portcullis", scope="orders:read", resource_metadata="http://api.portcullis.test/.well-known/oauth-protected-resource", ' +
        'DPoP realm="portcullis", scope="orders:read", algs="ES256 ES384 EdDSA Ed25519 PS256 RS256", resource_metadata="http://api.portcullis.test/.well-known/oauth-protected-resource"',
    );
  });
});

describe('URLs behind a proxy, streams, nonces, store outage', () => {
  test('PUBLIC_URL names the URL proofs must use; forwarded headers count only with TRUST_PROXY', async () => {
    const key = await newKey();
    const { access_token: token } = await boundToken(key);
    const withProof = (base: string, htuBase: string, headers: Record<string, string> = {}) =>
      proof(key, { htu: `${htuBase}/orders`, ath: ath(token) }).then((p) =>
        send(base, '/orders', { authorization: `DPoP ${token}`, proofs: [p], headers }),
      );

    const published = await instance({ PUBLIC_URL: 'https://api.example.test/v1' });
    expect((await withProof(published.url, 'https://api.example.test/v1')).status).toBe(200);
    expectRefused(
      await withProof(published.url, published.url),
      'invalid_dpop_proof',
      'dpop_proof_mismatch',
    );

    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.test' };
    const trusting = await instance({ TRUST_PROXY: 'true' });
    expect((await withProof(trusting.url, 'https://api.example.test', forwarded)).status).toBe(200);
    // Without TRUST_PROXY anyone could claim any host: the request's own URL counts.
    expectRefused(
      await withProof(api.url, 'https://api.example.test', forwarded),
      'invalid_dpop_proof',
      'dpop_proof_mismatch',
    );
    expect((await withProof(api.url, api.url, forwarded)).status).toBe(200);
  });

  test('/stream accepts DPoP (htu is the stream URL) and stays open across heartbeats', async () => {
    const server = await instance({ STREAM_HEARTBEAT_MS: '50' });
    const key = await newKey();
    const { access_token: token } = await boundToken(key);
    const p = await proof(key, { htu: `${server.url}/stream`, ath: ath(token) });
    const controller = new AbortController();
    const res = await fetch(`${server.url}/stream`, {
      headers: { authorization: `DPoP ${token}`, dpop: p },
      signal: controller.signal,
    });
    try {
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let text = '';
      const decoder = new TextDecoder();
      // Heartbeats re-authenticate the request: its proof is not a replay of itself.
      for (let i = 0; i < 50 && (text.match(/: ping/g) ?? []).length < 5; i++) {
        const { value, done } = await reader.read();
        expect(done).toBe(false);
        text += decoder.decode(value, { stream: true });
      }
      expect((text.match(/: ping/g) ?? []).length).toBeGreaterThanOrEqual(5);
    } finally {
      controller.abort();
    }
    // The proof of that stream cannot open another.
    const replay = await send(server.url, '/stream', {
      authorization: `DPoP ${token}`,
      proofs: [p],
    });
    expectRefused(replay, 'invalid_dpop_proof', 'dpop_proof_replayed');
  });

  test('DPOP_NONCE: use_dpop_nonce with a DPoP-Nonce; openid-client retries; nonces work on every instance', async () => {
    const [one, two] = [
      await instance({ DPOP_NONCE: 'true' }),
      await instance({ DPOP_NONCE: 'true' }),
    ];
    const key = await newKey();
    const { access_token: token } = await boundToken(key);

    const first = await dpopGet(one.url, '/orders', token, [
      await proof(key, { htu: `${one.url}/orders`, ath: ath(token) }),
    ]);
    expectRefused(first, 'use_dpop_nonce', 'dpop_nonce_required');
    const nonce = first.headers.get('dpop-nonce');
    expect(nonce).toMatch(/^[\x21\x23-\x5b\x5d-\x7e]+$/);

    const withNonce = await dpopGet(two.url, '/orders', token, [
      await proof(key, { htu: `${two.url}/orders`, ath: ath(token), nonce: nonce! }),
    ]);
    expect(withNonce.status).toBe(200);
    expect(withNonce.headers.get('dpop-nonce')).toBe(nonce);
    expectRefused(
      await dpopGet(two.url, '/orders', token, [
        await proof(key, { htu: `${two.url}/orders`, ath: ath(token), nonce: `${nonce}x` }),
      ]),
      'use_dpop_nonce',
      'dpop_nonce_required',
    );

    // openid-client learns the nonce from the use_dpop_nonce answer and retries once.
    const handle = oidc.getDPoPHandle(service, key.keyPair);
    const read = await oidc.fetchProtectedResource(
      service,
      token,
      new URL(`${one.url}/orders`),
      'GET',
      undefined,
      undefined,
      { DPoP: handle },
    );
    expect(read.status).toBe(200);
  });

  test('one caller flooding DPoP requests meets its own limit (429); another caller is still served', async () => {
    // A Redis-less instance whose proof store holds 100 proofs, and 20 requests per caller.
    const server = await instance(
      { JWT_RATE_LIMIT: '20', JWT_RATE_WINDOW: '600' },
      { dpopReplay: createMemoryReplayStore({ maxEntries: 100 }) },
    );
    const htu = `${server.url}/orders`;
    // A client of its own: with Redis, every instance counts a subject against one limit.
    const flooder = await newKey();
    const { access_token: flooding } = await boundToken(flooder, await serviceClient(['admin']));
    const statuses: number[] = [];
    for (let i = 0; i < 110; i++) {
      const reply = await dpopGet(server.url, '/orders', flooding, [
        await proof(flooder, { htu, ath: ath(flooding) }),
      ]);
      statuses.push(reply.status);
      if (reply.status === 429) expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.slice(20).every((s) => s === 429)).toBe(true);

    const other = await serviceClient(['admin']);
    const key = await newKey();
    const { access_token: token } = await boundToken(key, other);
    for (let i = 0; i < 5; i++) {
      const reply = await dpopGet(server.url, '/orders', token, [
        await proof(key, { htu, ath: ath(token) }),
      ]);
      expect(reply.status).toBe(200);
    }
  });

  (REDIS_URL ? test : test.skip)(
    `Redis unreachable: DPoP requests fail closed with 503${REDIS_URL ? '' : ' (skipped: REDIS_URL not set)'}`,
    async () => {
      const redis = new URL(REDIS_URL!);
      const proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
      try {
        const server = await instance({ REDIS_URL: `redis://127.0.0.1:${proxy.port}` });
        const key = await newKey();
        const { access_token: token } = await boundToken(key);
        const attempt = async () =>
          dpopGet(server.url, '/orders', token, [
            await proof(key, { htu: `${server.url}/orders`, ath: ath(token) }),
          ]);
        expect((await attempt()).status).toBe(200);
        await proxy.cut();
        const down = await attempt();
        expect(down.status).toBe(503);
        expect(down.headers.get('retry-after')).toBe('5');
        await proxy.restore();
      } finally {
        await proxy.close();
      }
    },
  );
});

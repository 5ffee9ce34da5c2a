import { afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  createAccessTokenVerifier,
  createRemoteKeySet,
  TokenError,
  type AccessTokenVerifier,
} from '../src/index.js';
import {
  AUDIENCE,
  ISSUER,
  makeKey,
  mint,
  NOW,
  startJwksServer,
  type JwksServer,
  type TestKey,
} from './helpers.js';

const COOLDOWN = 30_000;
const MAX_AGE = 600_000;

let k1: TestKey;
let k2: TestKey;
let k3: TestKey;
let server: JwksServer;
let now: number;
let verifier: AccessTokenVerifier;

beforeAll(async () => {
  [k1, k2, k3] = await Promise.all([
    makeKey('RS256', 'k1'),
    makeKey('ES256', 'k2'),
    makeKey('RS256', 'k3'),
  ]);
});

beforeEach(async () => {
  server = await startJwksServer([k1.publicJwk]);
  now = NOW;
  const clock = () => now;
  const keys = createRemoteKeySet(server.url, {
    cacheMaxAgeMs: MAX_AGE,
    cooldownMs: COOLDOWN,
    now: clock,
  });
  verifier = createAccessTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, keys, now: clock });
});

afterEach(() => server.close());

async function codeOf(token: string): Promise<string> {
  const error = await verifier.verify(token).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TokenError);
  return (error as TokenError).code;
}

describe('remote JWKS', () => {
  it('fetches once and serves later tokens from the cached key set', async () => {
    await verifier.verify(await mint(k1, { jti: 'a' }));
    await verifier.verify(await mint(k1, { jti: 'b' }));
    now += MAX_AGE - 1;
    await verifier.verify(await mint(k1, { jti: 'c' }));
    expect(server.requests).toBe(1);
  });

  it('fetches a rotated-in kid once, and not again for another unknown kid within the cooldown', async () => {
    await verifier.verify(await mint(k1));
    server.keys = [k1.publicJwk, k2.publicJwk];
    // Within the cooldown of the first fetch the new kid is not fetched yet.
    expect(await codeOf(await mint(k2))).toBe('kid_unknown');
    expect(server.requests).toBe(1);
    now += COOLDOWN;
    await expect(verifier.verify(await mint(k2))).resolves.toMatchObject({ sub: 'user-1' });
    expect(server.requests).toBe(2);
    expect(await codeOf(await mint(k3))).toBe('kid_unknown');
    expect(await codeOf(await mint(k1, {}, { kid: 'random-kid' }))).toBe('kid_unknown');
    expect(server.requests).toBe(2);
    now += COOLDOWN;
    expect(await codeOf(await mint(k3))).toBe('kid_unknown');
    expect(server.requests).toBe(3);
  });

  it('shares one fetch between concurrent requests with unknown kids', async () => {
    await verifier.verify(await mint(k1));
    now += COOLDOWN;
    const tokens = await Promise.all(['x', 'y', 'z', 'w'].map((kid) => mint(k1, {}, { kid })));
    const codes = await Promise.all(tokens.map(codeOf));
    expect(codes).toEqual(['kid_unknown', 'kid_unknown', 'kid_unknown', 'kid_unknown']);
    expect(server.requests).toBe(2);
  });

  it('refuses a removed key once the cache has expired and been refreshed', async () => {
    await verifier.verify(await mint(k1));
    server.keys = [k2.publicJwk];
    now += COOLDOWN;
    await verifier.verify(await mint(k1, { jti: 'still-cached' }));
    expect(server.requests).toBe(1);
    now += MAX_AGE;
    expect(await codeOf(await mint(k1, { jti: 'after-refresh' }))).toBe('kid_unknown');
    expect(server.requests).toBe(2);
    await expect(verifier.verify(await mint(k2))).resolves.toBeDefined();
  });

  it('answers jwks_unavailable (503) when keys were never loaded, and keeps stale keys on a failed refresh', async () => {
    server.status = 500;
    const error = await verifier.verify(await mint(k1)).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'jwks_unavailable', status: 503 });
    server.status = 200;
    now += 1_000;
    await verifier.verify(await mint(k1));
    server.status = 500;
    now += MAX_AGE;
    await expect(verifier.verify(await mint(k1, { jti: 'stale' }))).resolves.toBeDefined();
    expect(server.requests).toBe(3);
  });

  it('ignores private, encryption-only and wrong-alg entries of the key set', async () => {
    const { publicJwk } = k3;
    server.keys = [
      { ...publicJwk, kid: 'enc', use: 'enc' },
      { ...publicJwk, kid: 'ops', key_ops: ['encrypt'] },
      { ...publicJwk, kid: 'alg', alg: 'RS512' },
      { ...publicJwk, kid: 'priv', d: 'AAAA' },
      { ...publicJwk, kid: 'dup' },
      { ...publicJwk, kid: 'dup' },
    ];
    for (const kid of ['enc', 'ops', 'alg', 'priv', 'dup']) {
      expect(await codeOf(await mint(k3, {}, { kid }))).toBe('kid_unknown');
    }
  });
});

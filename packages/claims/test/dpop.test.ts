import { createHash, randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import {
  createAccessTokenVerifier,
  createDpopNonces,
  createDpopVerifier,
  createJwtPrincipalResolver,
  createLocalKeySet,
  createMemoryReplayStore,
  createTokenCache,
  htuOf,
  jwkThumbprint,
  TokenError,
  type DpopReplayStore,
  type DpopVerifierOptions,
} from '../src/index.js';
import { AUDIENCE, ISSUER, makeKey, mint, NOW, NOW_SEC, sign, type TestKey } from './helpers.js';

const URL_ = 'https://api.example.test/orders';
const TOKEN = 'header.payload.signature';
const ath = (token: string) => createHash('sha256').update(token).digest('base64url');

interface ProofKey {
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
  jkt: string;
}

async function proofKey(alg: string, options: { crv?: string } = {}): Promise<ProofKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, ...options });
  const jwk = await exportJWK(publicKey);
  return { alg, privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

let jti = 0;
function proof(
  key: ProofKey,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  return sign(
    key.privateKey,
    { typ: 'dpop+jwt', alg: key.alg, jwk: key.jwk, ...header },
    { htm: 'GET', htu: URL_, iat: NOW_SEC, jti: `p-${++jti}`, ath: ath(TOKEN), ...claims },
  );
}

function dpopVerifier(options: Partial<DpopVerifierOptions> = {}) {
  return createDpopVerifier({
    replay: createMemoryReplayStore({ now: () => NOW }),
    now: () => NOW,
    ...options,
  });
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'accepted';
  } catch (error) {
    if (!(error instanceof TokenError)) throw error;
    expect(error.scheme).toBe('DPoP');
    return error.code;
  }
}

const request = (
  proofs: string[],
  extra: { method?: string; url?: string; request?: object } = {},
) => ({
  proofs,
  method: extra.method ?? 'GET',
  url: extra.url ?? URL_,
  ...(extra.request ? { request: extra.request } : {}),
});

describe('jwkThumbprint and htuOf', () => {
  it('computes the RFC 7638 thumbprint of EC, RSA and OKP keys as jose does', async () => {
    for (const [alg, options] of [
      ['ES256', {}],
      ['RS256', {}],
      ['EdDSA', { crv: 'Ed25519' }],
    ] as const) {
      const key = await proofKey(alg, options);
      expect(jwkThumbprint({ ...key.jwk, kid: 'ignored', use: 'sig' })).toBe(key.jkt);
    }
    expect(jwkThumbprint({ kty: 'oct', k: 'c2VjcmV0' })).toBeUndefined();
    expect(jwkThumbprint({ kty: 'EC', crv: 'P-256', x: 'a' })).toBeUndefined();
  });

  it('compares scheme, host, port and path; drops query and fragment; refuses other schemes', () => {
    expect(htuOf('HTTPS://API.example.test:443/orders?x=1#f')).toBe(URL_);
    expect(htuOf('http://127.0.0.1:80/a/../orders')).toBe('http://127.0.0.1/orders');
    expect(htuOf('https://api.example.test:8443/orders')).not.toBe(URL_);
    expect(htuOf('ftp://api.example.test/orders')).toBeUndefined();
    expect(htuOf('/orders')).toBeUndefined();
  });
});

describe('createDpopVerifier', () => {
  let es: ProofKey;
  beforeAll(async () => {
    es = await proofKey('ES256');
  });

  it('accepts ES256, RS256, PS256 and EdDSA proofs', async () => {
    const dpop = dpopVerifier();
    for (const key of [
      es,
      await proofKey('RS256'),
      await proofKey('PS256'),
      await proofKey('EdDSA', { crv: 'Ed25519' }),
    ]) {
      expect(await codeOf(dpop.verify(request([await proof(key)]), TOKEN, key.jkt))).toBe(
        'accepted',
      );
    }
  });

  it('names each refusal', async () => {
    const dpop = dpopVerifier();
    const other = await proofKey('ES256');
    const { privateKey: rsa } = await generateKeyPair('RS256', { extractable: true });
    const payload = { htm: 'GET', htu: URL_, iat: NOW_SEC, jti: 'x', ath: ath(TOKEN) };
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const cases: [string, string | string[], { method?: string; url?: string }?][] = [
      ['dpop_proof_missing', []],
      ['dpop_proof_multiple', [await proof(es), await proof(es)]],
      ['dpop_proof_invalid', 'a.b'],
      [
        'dpop_proof_invalid',
        `${b64({ typ: 'dpop+jwt', alg: 'none', jwk: es.jwk })}.${b64(payload)}.`,
      ],
      [
        'dpop_proof_invalid',
        await sign(randomBytes(32), { typ: 'dpop+jwt', alg: 'HS256', jwk: es.jwk }, payload),
      ],
      ['dpop_proof_invalid', await proof(es, {}, { typ: 'JWT' })],
      ['dpop_proof_invalid', await proof(es, {}, { typ: undefined })],
      ['dpop_proof_invalid', await proof(es, {}, { jwk: undefined })],
      ['dpop_proof_invalid', await proof(es, {}, { jwk: { ...es.jwk, d: 'secret' } })],
      ['dpop_proof_invalid', await proof(es, {}, { jwk: { kty: 'oct', k: 'c2VjcmV0' } })],
      // Signed by another key than the header's.
      [
        'dpop_proof_invalid',
        await sign(other.privateKey, { typ: 'dpop+jwt', alg: 'ES256', jwk: es.jwk }, payload),
      ],
      // An RS256 header over an EC key.
      [
        'dpop_proof_invalid',
        await sign(rsa, { typ: 'dpop+jwt', alg: 'RS256', jwk: es.jwk }, payload),
      ],
      ['dpop_proof_invalid', await proof(es, { jti: undefined })],
      ['dpop_proof_invalid', await proof(es, { jti: 'j'.repeat(257) })],
      ['dpop_proof_invalid', await proof(es, { iat: '1750000000' })],
      ['dpop_proof_invalid', await proof(es, { htu: undefined })],
      ['dpop_proof_mismatch', await proof(es), { method: 'POST' }],
      ['dpop_proof_mismatch', await proof(es, { htm: 'get' })],
      ['dpop_proof_mismatch', await proof(es), { url: 'https://api.example.test/orders/1' }],
      ['dpop_proof_mismatch', await proof(es), { url: 'https://other.example.test/orders' }],
      ['dpop_proof_mismatch', await proof(es, { ath: ath('other') })],
      ['dpop_proof_mismatch', await proof(es, { ath: undefined })],
      ['dpop_proof_stale', await proof(es, { iat: NOW_SEC - 91 })],
      ['dpop_proof_stale', await proof(es, { iat: NOW_SEC + 91 })],
      ['dpop_key_mismatch', await proof(other)],
    ];
    for (const [code, proofs, extra] of cases) {
      const sent = typeof proofs === 'string' ? [proofs] : proofs;
      expect([code, await codeOf(dpop.verify(request(sent, extra), TOKEN, es.jkt))]).toEqual([
        code,
        code,
      ]);
    }
    // Within the window plus tolerance either way.
    for (const iat of [NOW_SEC - 90, NOW_SEC + 90]) {
      expect(await codeOf(dpop.verify(request([await proof(es, { iat })]), TOKEN, es.jkt))).toBe(
        'accepted',
      );
    }
  });

  it('what it remembers of a client (its header, its token hash) never lets a bad proof through', async () => {
    const dpop = dpopVerifier();
    const good = await proof(es);
    expect(await codeOf(dpop.verify(request([good]), TOKEN, es.jkt))).toBe('accepted');
    // The header is now cached: the payload and signature are still checked in full.
    const [h, p, s] = (await proof(es)).split('.') as [string, string, string];
    for (const bad of [`${h}.${p}!.${s}`, `${h}.${p}.${s}.${s}`, `${h}..${s}`, `${h}.${p}.`]) {
      expect(await codeOf(dpop.verify(request([bad]), TOKEN, es.jkt))).toBe('dpop_proof_invalid');
    }
    // Two tokens ending alike: each `ath` is compared with the hash of the whole token.
    const [first, second] = ['first', 'second'].map((head) => `${head}.${'p'.repeat(40)}.sig`);
    const bound = (token: string, claimed: string) =>
      proof(es, { ath: ath(claimed) }).then((sent) =>
        codeOf(dpop.verify(request([sent]), token, es.jkt)),
      );
    expect(await bound(first!, first!)).toBe('accepted');
    expect(await bound(second!, first!)).toBe('dpop_proof_mismatch');
    expect(await bound(second!, second!)).toBe('accepted');
    expect(await bound(first!, second!)).toBe('dpop_proof_mismatch');
  });

  it('the iat window is configurable', async () => {
    const dpop = dpopVerifier({ iatWindowSec: 5, clockToleranceSec: 0 });
    expect(
      await codeOf(dpop.verify(request([await proof(es, { iat: NOW_SEC - 6 })]), TOKEN, es.jkt)),
    ).toBe('dpop_proof_stale');
    expect(
      await codeOf(dpop.verify(request([await proof(es, { iat: NOW_SEC - 5 })]), TOKEN, es.jkt)),
    ).toBe('accepted');
  });

  it('accepts a proof once, except when the same request checks it again', async () => {
    const dpop = dpopVerifier();
    const once = await proof(es);
    const req = {};
    expect(await codeOf(dpop.verify(request([once], { request: req }), TOKEN, es.jkt))).toBe(
      'accepted',
    );
    expect(await codeOf(dpop.verify(request([once], { request: req }), TOKEN, es.jkt))).toBe(
      'accepted',
    );
    expect(await codeOf(dpop.verify(request([once], { request: {} }), TOKEN, es.jkt))).toBe(
      'dpop_proof_replayed',
    );
    expect(await codeOf(dpop.verify(request([once]), TOKEN, es.jkt))).toBe('dpop_proof_replayed');
  });

  it("refuses a proof by another key than the token's before checking its signature", async () => {
    const dpop = dpopVerifier();
    const other = await proofKey('ES256');
    const third = await proofKey('ES256');
    // The header names `other`, the signature is by `third`: only the key check can name it.
    const forged = await sign(
      third.privateKey,
      { typ: 'dpop+jwt', alg: 'ES256', jwk: other.jwk },
      { htm: 'GET', htu: URL_, iat: NOW_SEC, jti: 'forged', ath: ath(TOKEN) },
    );
    expect(await codeOf(dpop.verify(request([forged]), TOKEN, es.jkt))).toBe('dpop_key_mismatch');
    // The same forgery for a token bound to `other` fails on its signature.
    expect(await codeOf(dpop.verify(request([forged]), TOKEN, other.jkt))).toBe(
      'dpop_proof_invalid',
    );
  });

  it('checks ES256 and ES384 signatures of every length of r and s', async () => {
    const dpop = dpopVerifier();
    for (const key of [es, await proofKey('ES384')]) {
      // About one signature in 128 has a leading zero byte in r or s; 300 cover both cases.
      for (let i = 0; i < 300; i++) {
        expect(await codeOf(dpop.verify(request([await proof(key)]), TOKEN, key.jkt))).toBe(
          'accepted',
        );
      }
      const good = await proof(key);
      const [h, p, s] = good.split('.') as [string, string, string];
      const bytes = Buffer.from(s, 'base64url');
      bytes[bytes.length - 1]! ^= 1;
      for (const signature of [bytes, bytes.subarray(1), Buffer.alloc(bytes.length)]) {
        const bad = `${h}.${p}.${signature.toString('base64url')}`;
        expect(await codeOf(dpop.verify(request([bad]), TOKEN, key.jkt))).toBe(
          'dpop_proof_invalid',
        );
      }
    }
  });

  it('fails closed (503) when the replay store cannot answer', async () => {
    const down: DpopReplayStore = { claim: () => Promise.reject(new Error('ECONNREFUSED')) };
    const error = await dpopVerifier({ replay: down })
      .verify(request([await proof(es)]), TOKEN, es.jkt)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'dpop_store_unavailable', status: 503 });
  });

  it('with nonces: use_dpop_nonce carries the current nonce, which is then accepted', async () => {
    const secret = randomBytes(32);
    const nonces = createDpopNonces({ secret: async () => secret, now: () => NOW });
    const dpop = dpopVerifier({ nonces });
    const error = (await dpop
      .verify(request([await proof(es)]), TOKEN, es.jkt)
      .catch((e: unknown) => e)) as TokenError;
    expect(error).toMatchObject({
      code: 'dpop_nonce_required',
      oauthError: 'use_dpop_nonce',
      status: 401,
    });
    expect(error.nonce).toBe(await nonces.current());
    expect(
      await codeOf(dpop.verify(request([await proof(es, { nonce: error.nonce })]), TOKEN, es.jkt)),
    ).toBe('accepted');
  });
});

describe('createDpopNonces', () => {
  it('rotates each period, accepts the previous one, and any instance with the secret agrees', async () => {
    const secret = randomBytes(32);
    let now = NOW;
    const a = createDpopNonces({ secret: async () => secret, periodSec: 60, now: () => now });
    const b = createDpopNonces({ secret: async () => secret, periodSec: 60, now: () => now });
    const first = await a.current();
    expect(await b.current()).toBe(first);
    expect(await b.isValid(first)).toBe(true);
    now += 60_000;
    const second = await a.current();
    expect(second).not.toBe(first);
    expect(await b.isValid(first)).toBe(true);
    now += 60_000;
    expect(await b.isValid(first)).toBe(false);
    expect(await b.isValid(second)).toBe(true);
    const stranger = createDpopNonces({
      secret: async () => randomBytes(32),
      periodSec: 60,
      now: () => now,
    });
    expect(await stranger.isValid(await a.current())).toBe(false);
    for (const bad of ['', 'x', `${second}x`, second.replace(/^[^.]+/, 'zzzzzz')]) {
      expect(await a.isValid(bad)).toBe(false);
    }
  });
});

describe('createMemoryReplayStore', () => {
  it('remembers an id for its TTL, then forgets it; refuses to forget live ids when full', async () => {
    let now = NOW;
    const store = createMemoryReplayStore({ maxEntries: 2, maxEntriesPerOwner: 2, now: () => now });
    expect(await store.claim('k', 'a', 1000)).toBe(true);
    expect(await store.claim('k', 'a', 1000)).toBe(false);
    expect(await store.claim('l', 'a', 1000)).toBe(true);
    await expect(store.claim('k', 'c', 1000)).rejects.toThrow('full');
    now += 1000;
    expect(await store.claim('k', 'a', 1000)).toBe(true);
    expect(await store.claim('k', 'c', 1000)).toBe(true);
  });

  it('one key flooding the store leaves room for the others', async () => {
    let now = NOW;
    const store = createMemoryReplayStore({ maxEntries: 100, now: () => now });
    const flood: string[] = [];
    for (let i = 0; i < 200; i++) {
      flood.push(await store.claim('flooder', `f${i}`, 60_000).then(String, () => 'refused'));
    }
    // Alone, a key may fill half the store; then it keeps 1% of it, the others the rest.
    expect(flood.filter((r) => r === 'true')).toHaveLength(50);
    expect(flood.slice(50).every((r) => r === 'refused')).toBe(true);
    for (let i = 0; i < 49; i++) expect(await store.claim(`key${i}`, 'a', 60_000)).toBe(true);
    expect(await store.claim('key0', 'b', 60_000).then(String, () => 'refused')).toBe('refused');
    // Its entries expire, and the key is served again.
    now += 60_000;
    expect(await store.claim('flooder', 'again', 60_000)).toBe(true);
  });

  it('forgetting expired ids never forgets a live one', async () => {
    let now = NOW;
    const store = createMemoryReplayStore({ now: () => now });
    const claim = (id: string) => store.claim(`k${id.length % 7}`, id, 60_000);
    const early = Array.from({ length: 20_000 }, (_, i) => `early ${i}`);
    const late = Array.from({ length: 20_000 }, (_, i) => `late ${i}`);
    expect((await Promise.all(early.map(claim))).every((first) => first)).toBe(true);
    now += 30_000;
    expect((await Promise.all(late.map(claim))).every((first) => first)).toBe(true);
    now += 30_000;
    expect((await Promise.all(late.map(claim))).some((first) => first)).toBe(false);
    expect((await Promise.all(early.map(claim))).every((first) => first)).toBe(true);
  }, 30_000);

  it('holds its default 500,000 live ids in under 100 bytes each (the API runs on a 128 MB heap)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const used = () => {
      gc();
      const { heapUsed, arrayBuffers } = process.memoryUsage();
      return heapUsed + arrayBuffers;
    };
    const store = createMemoryReplayStore({ now: () => NOW });
    const before = used();
    // As the verifier names them: a key thumbprint and a jti's SHA-256, 43 characters each.
    const digest = (text: string) => createHash('sha256').update(text).digest('base64url');
    const owners = Array.from({ length: 1000 }, (_, i) => digest(`owner ${i}`));
    let claimed = 0;
    for (let i = 0; i < 500_000; i++) {
      if (await store.claim(owners[i % 1000]!, digest(`jti ${i}`), 90_000)) claimed++;
    }
    expect(claimed).toBe(500_000);
    expect(used() - before).toBeLessThan(500_000 * 100);
    await expect(store.claim(owners[0]!, 'one more', 90_000)).rejects.toThrow('full');
  }, 60_000);
});

describe('createJwtPrincipalResolver with DPoP', () => {
  let key: TestKey;
  let es: ProofKey;
  beforeAll(async () => {
    key = await makeKey('ES256', 'k');
    es = await proofKey('ES256');
  });

  function resolver() {
    const verifier = createAccessTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keys: createLocalKeySet({ keys: [key.publicJwk] }),
      cache: createTokenCache(),
      now: () => NOW,
    });
    return createJwtPrincipalResolver(verifier, { dpop: dpopVerifier() });
  }

  it('a cached bound token still needs its proof on every request; Bearer never works for it', async () => {
    const resolve = resolver();
    const token = await mint(key, { cnf: { jkt: es.jkt } });
    const input = async (claims: Record<string, unknown> = {}) => ({
      authorization: `DPoP ${token}`,
      dpop: request([await proof(es, { ath: ath(token), ...claims })]),
    });
    await expect(resolve(await input())).resolves.toMatchObject({ subject: 'user-1' });
    await expect(resolve(await input({ htm: 'POST' }))).rejects.toMatchObject({
      code: 'dpop_proof_mismatch',
    });
    await expect(resolve({ authorization: `DPoP ${token}` })).rejects.toMatchObject({
      code: 'dpop_proof_missing',
    });
    await expect(resolve({ authorization: `Bearer ${token}` })).rejects.toMatchObject({
      code: 'token_bound',
      scheme: 'Bearer',
    });
    // A token bound by some other method (mTLS) is not a bearer token either.
    const mtls = await mint(key, { cnf: { 'x5t#S256': 'abc' } });
    await expect(resolve({ authorization: `Bearer ${mtls}` })).rejects.toMatchObject({
      code: 'token_bound',
    });
  });

  it('an unbound token is refused as DPoP; token errors under DPoP name the DPoP scheme', async () => {
    const resolve = resolver();
    const unbound = await mint(key);
    await expect(
      resolve({
        authorization: `DPoP ${unbound}`,
        dpop: request([await proof(es, { ath: ath(unbound) })]),
      }),
    ).rejects.toMatchObject({
      code: 'token_not_bound',
      scheme: 'DPoP',
      oauthError: 'invalid_token',
    });
    await expect(resolve({ authorization: `Bearer ${unbound}` })).resolves.toMatchObject({
      subject: 'user-1',
    });
    const expired = await mint(key, { cnf: { jkt: es.jkt }, exp: NOW_SEC - 60 });
    await expect(resolve({ authorization: `DPoP ${expired}` })).rejects.toMatchObject({
      code: 'token_expired',
      scheme: 'DPoP',
    });
    await expect(
      resolve({ authorization: `DPoP ${await mint(key, { cnf: { jkt: 'short' } })}` }),
    ).rejects.toMatchObject({
      code: 'claim_invalid',
    });
  });

  it('without a DPoP verifier, the DPoP scheme is refused', async () => {
    const verify = createAccessTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keys: createLocalKeySet({ keys: [key.publicJwk] }),
      now: () => NOW,
    });
    const resolve = createJwtPrincipalResolver(verify);
    await expect(resolve({ authorization: `DPoP ${await mint(key)}` })).rejects.toMatchObject({
      code: 'scheme_unsupported',
    });
  });
});

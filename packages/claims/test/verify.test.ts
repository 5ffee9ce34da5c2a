import { beforeAll, describe, expect, it } from '@jest/globals';
import { exportSPKI, generateKeyPair } from 'jose';
import {
  actorChain,
  createAccessTokenVerifier,
  createDenyList,
  createLocalKeySet,
  createSharedSecretKey,
  createTokenCache,
  principalFromClaims,
  TokenError,
  verifyAccessToken,
  type KeySource,
  type TokenErrorCode,
  type VerifyOptions,
} from '../src/index.js';
import {
  AUDIENCE,
  b64,
  claims,
  ISSUER,
  makeKey,
  mint,
  NOW,
  NOW_SEC,
  sign,
  type TestKey,
} from './helpers.js';

let rsa: TestKey;
let ec: TestKey;
let attacker: TestKey;
let options: VerifyOptions;

beforeAll(async () => {
  [rsa, ec, attacker] = await Promise.all([
    makeKey('RS256', 'rsa-1'),
    makeKey('ES256', 'ec-1'),
    makeKey('RS256', 'attacker'),
  ]);
  options = {
    issuer: ISSUER,
    audience: AUDIENCE,
    keys: createLocalKeySet({ keys: [rsa.publicJwk, ec.publicJwk] }),
    now: () => NOW,
  };
});

/** An act claim `n` actors deep. */
function chainOf(n: number): Record<string, unknown> {
  let act: Record<string, unknown> | undefined;
  for (let i = 0; i < n; i++) act = { sub: `svc-${i}`, ...(act ? { act } : {}) };
  return act!;
}

async function codeOf(token: string, opts: VerifyOptions = options): Promise<TokenErrorCode> {
  try {
    await verifyAccessToken(token, opts);
  } catch (error) {
    expect(error).toBeInstanceOf(TokenError);
    return (error as TokenError).code;
  }
  throw new Error('token was accepted');
}

describe('verifyAccessToken accepts', () => {
  it('RS256 and ES256 tokens with typ at+jwt or application/at+jwt in any case', async () => {
    const fromRsa = await verifyAccessToken(await mint(rsa), options);
    expect(fromRsa).toMatchObject({ sub: 'user-1', roles: ['editor'], jti: 'jti-1' });
    await expect(verifyAccessToken(await mint(ec), options)).resolves.toMatchObject({
      sub: 'user-1',
    });
    for (const typ of ['application/at+jwt', 'AT+JWT', 'Application/At+Jwt']) {
      await expect(verifyAccessToken(await mint(rsa, {}, { typ }), options)).resolves.toBeDefined();
    }
  });

  it('an aud array containing the audience, and tokens expired within the 30 s tolerance', async () => {
    await expect(
      verifyAccessToken(await mint(rsa, { aud: ['https://other', AUDIENCE] }), options),
    ).resolves.toBeDefined();
    const late = await mint(rsa, { iat: NOW_SEC - 900, exp: NOW_SEC - 29 });
    await expect(verifyAccessToken(late, options)).resolves.toBeDefined();
    const early = await mint(rsa, { iat: NOW_SEC + 29, nbf: NOW_SEC + 29, exp: NOW_SEC + 900 });
    await expect(verifyAccessToken(early, options)).resolves.toBeDefined();
  });
});

describe('verifyAccessToken refuses', () => {
  it('alg none in any letter case, with or without a signature', async () => {
    for (const alg of ['none', 'NONE', 'nOnE']) {
      const unsigned = `${b64({ alg, typ: 'at+jwt', kid: 'rsa-1' })}.${b64(claims())}.`;
      expect(await codeOf(unsigned)).toBe('alg_not_allowed');
      expect(await codeOf(`${unsigned}c2ln`)).toBe('alg_not_allowed');
    }
  });

  it('algorithms outside the allowlist', async () => {
    const [, p, s] = (await mint(rsa)).split('.');
    for (const alg of ['RS512', 'PS256', 'EdDSA', 'rs256', '', null, ['RS256']]) {
      expect(await codeOf(`${b64({ alg, typ: 'at+jwt', kid: 'rsa-1' })}.${p}.${s}`)).toBe(
        'alg_not_allowed',
      );
    }
    const rsOnly = { ...options, algorithms: ['RS256'] as const };
    expect(await codeOf(await mint(ec), rsOnly)).toBe('alg_not_allowed');
  });

  it('a stripped signature', async () => {
    const token = await mint(rsa);
    expect(await codeOf(token.slice(0, token.lastIndexOf('.') + 1))).toBe('signature_invalid');
  });

  it('HS256 signed with the RSA public key (PEM or JWK bytes) as the HMAC secret', async () => {
    const { publicKey } = await generateKeyPair('RS256', { extractable: true });
    const pem = new TextEncoder().encode(await exportSPKI(publicKey));
    const jwkBytes = new TextEncoder().encode(JSON.stringify(rsa.publicJwk));
    for (const secret of [pem, jwkBytes]) {
      const token = await sign(secret, { alg: 'HS256', typ: 'at+jwt', kid: 'rsa-1' }, claims());
      expect(await codeOf(token)).toBe('alg_not_allowed');
    }
  });

  it('in shared-secret mode: RS/ES tokens, and HS256 tokens under another secret', async () => {
    const secret = new TextEncoder().encode('s'.repeat(32));
    const hs = { ...options, keys: createSharedSecretKey(secret) };
    const good = await sign(secret, { alg: 'HS256', typ: 'at+jwt', kid: 'hs' }, claims());
    await expect(verifyAccessToken(good, hs)).resolves.toBeDefined();
    expect(await codeOf(await mint(rsa), hs)).toBe('alg_not_allowed');
    expect(await codeOf(await mint(ec), hs)).toBe('alg_not_allowed');
    const pem = new TextEncoder().encode(JSON.stringify(rsa.publicJwk));
    const forged = await sign(pem, { alg: 'HS256', typ: 'at+jwt', kid: 'hs' }, claims());
    expect(await codeOf(forged, hs)).toBe('signature_invalid');
  });

  it('configurations that mix modes or allow none', () => {
    const secret = createSharedSecretKey('x'.repeat(32));
    expect(() => createAccessTokenVerifier({ ...options, algorithms: ['HS256'] })).toThrow(
      TypeError,
    );
    expect(() =>
      createAccessTokenVerifier({ ...options, keys: secret, algorithms: ['RS256'] }),
    ).toThrow(TypeError);
    const none = ['none'] as unknown as VerifyOptions['algorithms'];
    expect(() => createAccessTokenVerifier({ ...options, algorithms: none })).toThrow(TypeError);
    expect(() => createSharedSecretKey('short')).toThrow(RangeError);
  });

  it('missing, non-string, unknown and injected kids', async () => {
    expect(await codeOf(await mint(rsa, {}, { kid: undefined }))).toBe('kid_missing');
    expect(await codeOf(await mint(rsa, {}, { kid: 7 }))).toBe('kid_missing');
    expect(await codeOf(await mint(rsa, {}, { kid: '' }))).toBe('kid_missing');
    for (const kid of [
      'rsa-2',
      '../../etc/passwd',
      "' OR 1=1 --",
      'rsa-1\u0000',
      'x'.repeat(300),
    ]) {
      expect(await codeOf(await mint(rsa, {}, { kid }))).toBe('kid_unknown');
    }
    // An RS256 token naming the EC key's kid: kid and alg must agree on one key.
    expect(await codeOf(await mint(rsa, {}, { kid: 'ec-1' }))).toBe('kid_unknown');
  });

  it('keys offered in jwk / jku / x5u / x5c headers', async () => {
    const jwk = attacker.publicJwk;
    const header = {
      jwk,
      jku: 'https://evil.example/jwks',
      x5u: 'https://evil.example/c',
      x5c: ['AAAA'],
    };
    expect(await codeOf(await mint(attacker, {}, header))).toBe('kid_unknown');
    expect(await codeOf(await mint(attacker, {}, { ...header, kid: 'rsa-1' }))).toBe(
      'signature_invalid',
    );
  });

  it('expiry beyond the tolerance, future nbf and iat', async () => {
    expect(await codeOf(await mint(rsa, { iat: NOW_SEC - 900, exp: NOW_SEC - 30 }))).toBe(
      'token_expired',
    );
    expect(await codeOf(await mint(rsa, { iat: NOW_SEC - 900, exp: NOW_SEC - 31 }))).toBe(
      'token_expired',
    );
    expect(await codeOf(await mint(rsa, { nbf: NOW_SEC + 31 }))).toBe('token_not_yet_valid');
    expect(await codeOf(await mint(rsa, { iat: NOW_SEC + 31, exp: NOW_SEC + 900 }))).toBe(
      'token_not_yet_valid',
    );
  });

  it('missing or mistyped required claims', async () => {
    for (const claim of ['exp', 'iat', 'sub', 'jti', 'client_id']) {
      expect(await codeOf(await mint(rsa, { [claim]: undefined }))).toBe('claim_invalid');
    }
    expect(await codeOf(await mint(rsa, { exp: String(NOW_SEC + 60) }))).toBe('claim_invalid');
    expect(await codeOf(await mint(rsa, { roles: 'admin' }))).toBe('claim_invalid');
    expect(await codeOf(await mint(rsa, { iat: NOW_SEC, exp: NOW_SEC - 1 }))).toBe('claim_invalid');
    // A client subject must name the token's own client.
    expect(await codeOf(await mint(rsa, { sub: 'client:other', client_id: 'svc' }))).toBe(
      'claim_invalid',
    );
    expect(await codeOf(await mint(rsa, { sub: 'svc', client_id: 'svc' }))).toBe('claim_invalid');
  });

  it('claims of the wrong shape, each by name (the shape check is hand-written, no schema library)', async () => {
    const refusals: [Record<string, unknown>, string][] = [
      [{ sub: '' }, 'sub'],
      [{ sub: 'x'.repeat(1025) }, 'sub'],
      [{ aud: [AUDIENCE, 7] }, 'aud'],
      [{ scope: null }, 'scope'],
      [{ roles: ['x'.repeat(101)] }, 'roles'],
      [{ nbf: -1 }, 'nbf'],
      [{ email: 5 }, 'email'],
      [{ cnf: { jkt: 'short' } }, 'cnf'],
      [{ cnf: [] }, 'cnf'],
      [{ amr: [''] }, 'amr'],
      [{ auth_time: '1' }, 'auth_time'],
      [{ act: 'svc' }, 'act'],
      [{ act: { sub: '' } }, 'act'],
      [{ act: { sub: 'a', act: { sub: 7 } } }, 'act'],
      [{ act: chainOf(6) }, 'act'],
    ];
    for (const [overrides, claim] of refusals) {
      const error = await verifyAccessToken(await mint(rsa, overrides), options).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        code: 'claim_invalid',
        message: `claim ${claim} missing or invalid`,
      });
    }
  });

  it('an act chain (RFC 8693 §4.1) up to five actors, keeping only sub and act', async () => {
    const claims = await verifyAccessToken(
      await mint(rsa, { act: { sub: 'b', extra: 1, act: { sub: 'a' } } }),
      options,
    );
    expect(claims.act).toEqual({ sub: 'b', act: { sub: 'a' } });
    const principal = principalFromClaims(claims);
    expect(actorChain(principal)).toEqual(['b', 'a']);
    expect(
      actorChain(principalFromClaims(await verifyAccessToken(await mint(rsa), options))),
    ).toEqual([]);
    await expect(
      verifyAccessToken(await mint(rsa, { act: chainOf(5) }), options),
    ).resolves.toBeDefined();
  });

  it('keeps only the claims it reads, and an unknown confirmation method', async () => {
    const claims = await verifyAccessToken(
      await mint(rsa, {
        extra: 'dropped',
        scope: undefined,
        roles: undefined,
        cnf: { 'x5t#S256': 'a' },
      }),
      options,
    );
    expect(claims).not.toHaveProperty('extra');
    expect(claims).toMatchObject({ scope: '', roles: [], cnf: { 'x5t#S256': 'a' } });
  });

  it('a lifetime over one hour', async () => {
    expect(await codeOf(await mint(rsa, { iat: NOW_SEC - 10, exp: NOW_SEC + 3591 }))).toBe(
      'lifetime_too_long',
    );
  });

  it('another issuer, including a trailing-slash variant, and another audience', async () => {
    for (const iss of [`${ISSUER}/`, 'http://LOCALHOST:4000', 'https://evil.example', undefined]) {
      expect(await codeOf(await mint(rsa, { iss }))).toBe('issuer_mismatch');
    }
    for (const aud of ['http://localhost:3001', [`${AUDIENCE}/`], [], undefined]) {
      expect(await codeOf(await mint(rsa, { aud }))).toBe('audience_mismatch');
    }
  });

  it('ID tokens and other JWTs presented as access tokens', async () => {
    expect(await codeOf(await mint(rsa, {}, { typ: 'JWT' }))).toBe('typ_invalid');
    expect(await codeOf(await mint(rsa, {}, { typ: undefined }))).toBe('typ_invalid');
    expect(await codeOf(await mint(rsa, {}, { typ: 'logout+jwt' }))).toBe('typ_invalid');
  });

  it('a tampered payload or header', async () => {
    const [h, , s] = (await mint(rsa)).split('.');
    expect(await codeOf(`${h}.${b64(claims({ roles: ['admin'] }))}.${s}`)).toBe(
      'signature_invalid',
    );
    const header = b64({ alg: 'RS256', typ: 'at+jwt', kid: 'rsa-1', extra: 1 });
    const [, p] = (await mint(rsa)).split('.');
    expect(await codeOf(`${header}.${p}.${s}`)).toBe('signature_invalid');
  });

  it('an all-zero ES256 signature (r = s = 0)', async () => {
    const [h, p] = (await mint(ec)).split('.');
    expect(await codeOf(`${h}.${p}.${Buffer.alloc(64).toString('base64url')}`)).toBe(
      'signature_invalid',
    );
  });

  it('oversize tokens before decoding them', async () => {
    expect(await codeOf('a'.repeat(4097))).toBe('token_too_large');
    const big = await mint(rsa, { pad: 'x'.repeat(4000) });
    expect(await codeOf(big)).toBe('token_too_large');
    await expect(
      verifyAccessToken(big, { ...options, maxTokenLength: 8192 }),
    ).resolves.toBeDefined();
  });

  it('segments that are not base64url, and non-JSON parts', async () => {
    const [h, p, s] = (await mint(rsa)).split('.');
    const variants = [
      '',
      `${h}.${p}`,
      `${h}.${p}.${s}.x`,
      `${h}=.${p}.${s}`,
      `${h}.${p}.${s!.replace(/-|_/g, '+')}+/`,
      `${h}.${p}.${s} `,
      `${h}.${p}.${s}\n`,
      `.${p}.${s}`,
      `${h}..${s}`,
      `${h}.${p}.${s}a`.replace(/\.[^.]*$/, '.a'),
      `${b64('not json')}.${p}.${s}`,
      `${b64([1, 2])}.${p}.${s}`,
    ];
    for (const token of variants) expect(await codeOf(token)).toBe('token_malformed');
    // Correctly signed, but the payload is not a claims object.
    const header = { alg: 'RS256', typ: 'at+jwt', kid: 'rsa-1' };
    for (const payload of [[], 'str', null]) {
      const token = await sign(
        rsa.privateKey,
        header,
        payload as unknown as Record<string, unknown>,
      );
      expect(await codeOf(token)).toBe('token_malformed');
    }
  });

  it('unknown critical header parameters', async () => {
    const [, p, s] = (await mint(rsa)).split('.');
    const header = b64({ alg: 'RS256', typ: 'at+jwt', kid: 'rsa-1', crit: ['exp'], exp: 1 });
    expect(await codeOf(`${header}.${p}.${s}`)).toBe('token_malformed');
  });
});

describe('verified-token cache', () => {
  function counting(source: KeySource): KeySource & { calls: number } {
    const counted = {
      kind: source.kind,
      calls: 0,
      getKey: (kid: string, alg: 'RS256') => {
        counted.calls += 1;
        return source.getKey(kid, alg);
      },
    };
    return counted;
  }

  it('skips the signature check for a repeated token but rechecks exp', async () => {
    let now = NOW;
    const keys = counting(options.keys);
    const verifier = createAccessTokenVerifier({
      ...options,
      keys,
      now: () => now,
      cache: createTokenCache(),
    });
    const token = await mint(rsa);
    const first = await verifier.verify(token);
    expect(await verifier.verify(token)).toBe(first);
    expect(keys.calls).toBe(1);
    now = (NOW_SEC + 890 + 30) * 1000;
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'token_expired' });
  });

  it('refuses a cached token once it is denied', async () => {
    const denyList = createDenyList({ now: () => NOW });
    const verifier = createAccessTokenVerifier({ ...options, denyList, cache: createTokenCache() });
    const token = await mint(rsa, { jti: 'cached-jti' });
    await verifier.verify(token);
    denyList.apply([{ kind: 'jti', value: 'cached-jti', before: null, expiresAt: NOW_SEC + 900 }]);
    await expect(verifier.verify(token)).rejects.toMatchObject({ code: 'token_revoked' });
  });

  it('a token sharing a cached token’s last characters is not served its claims', async () => {
    const cache = createTokenCache();
    const verifier = createAccessTokenVerifier({ ...options, cache });
    const token = await mint(rsa, { jti: 'original' });
    const claims = await verifier.verify(token);
    // Same signature end, other header and payload: the whole string must match.
    const forged = `${await mint(rsa, { jti: 'other', sub: 'someone-else' })}`.replace(
      /\.[^.]*$/,
      `.${token.split('.')[2]}`,
    );
    expect(forged).not.toBe(token);
    expect(cache.get(forged)).toBeUndefined();
    await expect(verifier.verify(forged)).rejects.toMatchObject({ code: 'signature_invalid' });
    expect(await verifier.verify(token)).toBe(claims);
    cache.delete(forged);
    expect(cache.get(token)).toBe(claims);
  });

  it('keeps a token used at least once every maxEntries / 2 insertions', async () => {
    const cache = createTokenCache({ maxEntries: 4 });
    const verifier = createAccessTokenVerifier({ ...options, cache });
    const tokens = await Promise.all(
      Array.from({ length: 8 }, (_, i) => mint(rsa, { jti: `t${i}` })),
    );
    const hot = await mint(rsa, { jti: 'hot' });
    await verifier.verify(hot);
    for (const [i, token] of tokens.entries()) {
      await verifier.verify(token);
      if (i % 2 === 1) expect(cache.get(hot)).toBeDefined();
    }
    expect(cache.size).toBe(4);
    expect(cache.get(tokens[0]!)).toBeUndefined();
  });

  it('does not cache refused tokens and evicts the least recently used', async () => {
    const cache = createTokenCache({ maxEntries: 2 });
    const verifier = createAccessTokenVerifier({ ...options, cache });
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((jti) => mint(rsa, { jti })));
    await verifier.verify(a!);
    await verifier.verify(b!);
    await verifier.verify(a!);
    await verifier.verify(c!);
    expect(cache.get(b!)).toBeUndefined();
    expect(cache.get(a!)).toBeDefined();
    await expect(verifier.verify(await mint(rsa, { iss: 'x' }))).rejects.toThrow(TokenError);
    expect(cache.size).toBe(2);
  });
});

import { describe, expect, test } from '@jest/globals';
import type { SigningKey } from '../data/signing-keys-repo.js';
import { accessTokenSigner, keyState, ringOf } from './keys.js';

const T0 = Date.UTC(2030, 0, 1);
const s = (seconds: number) => new Date(T0 + seconds * 1000);

function key(kid: string, times: Partial<SigningKey> & { activatesAt: Date }): SigningKey {
  const jwk = { kid, kty: 'RSA', alg: 'RS256', use: 'sig' };
  return {
    kid,
    alg: 'RS256',
    publicJwk: jwk,
    privateJwk: { ...jwk, d: 'secret' },
    createdAt: times.createdAt ?? times.activatesAt,
    retiredAt: null,
    expiresAt: null,
    ...times,
  };
}

// K0 signs until K1 activates at +60 s; K0 stays published until +60 + 1500 s.
const k0 = key('k0', { activatesAt: s(-1000), retiredAt: s(60), expiresAt: s(1560) });
const k1 = key('k1', { activatesAt: s(60), createdAt: s(0) });

describe('key states on a frozen clock', () => {
  test('keyState boundaries: activation and retirement are inclusive', () => {
    expect(keyState(k1, T0 + 59_999)).toBe('next');
    expect(keyState(k1, T0 + 60_000)).toBe('active');
    expect(keyState(k0, T0 + 59_999)).toBe('active');
    expect(keyState(k0, T0 + 60_000)).toBe('retired');
    expect(keyState(k0, T0 + 1_560_000)).toBe('expired');
  });

  test('before activation: the old key signs, the new one is published verify-only', () => {
    const ring = ringOf([k1, k0], T0)!;
    expect(ring.current.kid).toBe('k0');
    expect(ring.jwks.map((j) => [j.kid, j['key_ops']])).toEqual([
      ['k0', undefined],
      ['k1', ['verify']],
    ]);
    expect(ring.nextChangeAt).toBe(T0 + 60_000);
  });

  test('after activation: the new key signs, the old one is verify-only until it expires', () => {
    const ring = ringOf([k1, k0], T0 + 60_000)!;
    expect(ring.current.kid).toBe('k1');
    expect(ring.jwks.map((j) => [j.kid, j['key_ops']])).toEqual([
      ['k1', undefined],
      ['k0', ['verify']],
    ]);
    expect(ring.nextChangeAt).toBe(T0 + 1_560_000);
    expect(ring.fingerprint).not.toBe(ringOf([k1, k0], T0)!.fingerprint);
    const later = ringOf([k1, k0], T0 + 1_560_000)!;
    expect(later.jwks.map((j) => j.kid)).toEqual(['k1']);
    expect(later.nextChangeAt).toBeUndefined();
  });

  test('no active key (only a pending one) is reported, not papered over', () => {
    expect(ringOf([k1], T0)).toBeUndefined();
  });
});

describe('what each key signs', () => {
  const rsa = key('rsa', { activatesAt: s(-1000) });
  const ecJwk = { kid: 'ec', kty: 'EC', alg: 'ES256', use: 'sig' };
  const ec = {
    ...key('ec', { activatesAt: s(0) }),
    alg: 'ES256' as const,
    publicJwk: ecJwk,
    privateJwk: { ...ecJwk, d: 'secret' },
  };
  const oldRsa = key('rsa-old', { activatesAt: s(-2000), retiredAt: s(-1000) });

  test('after a rotation to ES256 the RS256 key still signs ID tokens of RS256 clients', () => {
    const ring = ringOf([rsa, ec, oldRsa], T0)!;
    expect(ring.current).toEqual({ kid: 'ec', alg: 'ES256' });
    expect(Object.fromEntries(ring.signs)).toEqual({
      ec: ['access_token', 'id_token'],
      rsa: ['id_token'],
    });
  });

  test('access tokens: the newest key, or for a client held to ES256/PS256 the newest of those', () => {
    const rsaNewest = key('rsa-new', { activatesAt: s(10) });
    const ring = ringOf([rsaNewest, rsa, ec, oldRsa], T0 + 20_000)!;
    expect(ring.current).toEqual({ kid: 'rsa-new', alg: 'RS256' });
    expect(accessTokenSigner(ring)).toEqual({ kid: 'rsa-new', alg: 'RS256' });
    expect(accessTokenSigner(ring, ['ES256', 'PS256'])).toEqual({ kid: 'ec', alg: 'ES256' });
    // The listing says so: the key a FAPI 2.0 client's access tokens get.
    expect(Object.fromEntries(ring.signs)).toEqual({
      'rsa-new': ['access_token', 'id_token'],
      ec: ['fapi_access_token', 'id_token'],
    });
    expect(accessTokenSigner(ringOf([rsa], T0)!, ['ES256', 'PS256'])).toBeUndefined();
  });

  test('a key not yet active, or retired, signs nothing', () => {
    const ring = ringOf([rsa, ec, oldRsa], T0 - 1)!;
    expect(Object.fromEntries(ring.signs)).toEqual({ rsa: ['access_token', 'id_token'] });
  });
});

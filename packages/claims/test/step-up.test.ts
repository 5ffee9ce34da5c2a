import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  ACR,
  acrSatisfies,
  createJwtPrincipalResolver,
  createAccessTokenVerifier,
  createLocalKeySet,
  stepUpShortfall,
  TokenError,
  verifyAccessToken,
  type Principal,
  type VerifyOptions,
} from '../src/index.js';
import { AUDIENCE, ISSUER, makeKey, mint, NOW, NOW_SEC, type TestKey } from './helpers.js';

let rsa: TestKey;
let options: VerifyOptions;

beforeAll(async () => {
  rsa = await makeKey('RS256', 'rsa-1');
  options = {
    issuer: ISSUER,
    audience: AUDIENCE,
    keys: createLocalKeySet({ keys: [rsa.publicJwk] }),
    now: () => NOW,
  };
});

async function principalOf(payload: Record<string, unknown>): Promise<Principal> {
  const resolve = createJwtPrincipalResolver(createAccessTokenVerifier(options));
  const principal = await resolve({ authorization: `Bearer ${await mint(rsa, payload)}` });
  if (!principal) throw new Error('no principal');
  return principal;
}

describe('the sign-in claims of an access token', () => {
  it('become the Principal’s acr, amr and authTime', async () => {
    const principal = await principalOf({
      acr: ACR.mfa,
      amr: ['pwd', 'otp'],
      auth_time: NOW_SEC - 60,
    });
    expect(principal).toMatchObject({ acr: ACR.mfa, amr: ['pwd', 'otp'], authTime: NOW_SEC - 60 });
    expect(Object.isFrozen(principal.amr)).toBe(true);
  });

  it('are optional: a token without them has none', async () => {
    const principal = await principalOf({});
    expect(principal.acr).toBeUndefined();
    expect(principal.amr).toBeUndefined();
    expect(principal.authTime).toBeUndefined();
  });

  it('are refused when mistyped (claim_invalid)', async () => {
    for (const bad of [{ acr: 2 }, { acr: '' }, { amr: 'pwd' }, { auth_time: 'yesterday' }]) {
      const refusal = await verifyAccessToken(await mint(rsa, bad), options).catch(
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(TokenError);
      expect((refusal as TokenError).code).toBe('claim_invalid');
    }
  });
});

describe('acrSatisfies', () => {
  it('ranks password below mfa; an unknown class satisfies only itself', () => {
    expect(acrSatisfies(ACR.mfa, ACR.mfa)).toBe(true);
    expect(acrSatisfies(ACR.mfa, ACR.password)).toBe(true);
    expect(acrSatisfies(ACR.password, ACR.mfa)).toBe(false);
    expect(acrSatisfies(undefined, ACR.password)).toBe(false);
    expect(acrSatisfies('urn:other:acr:gold', ACR.password)).toBe(false);
    expect(acrSatisfies('urn:other:acr:gold', 'urn:other:acr:gold')).toBe(true);
    expect(acrSatisfies('0', ACR.password)).toBe(false);
  });
});

describe('stepUpShortfall', () => {
  const user: Principal = {
    subject: 'user-1',
    kind: 'user',
    roles: ['admin'],
    permissions: [],
    scope: [],
    authMethod: 'jwt',
    acr: ACR.mfa,
    amr: ['pwd', 'otp'],
    authTime: NOW_SEC - 100,
  };
  const rule = { acr: ACR.mfa, maxAgeSec: 300 };

  it('is undefined for a strong enough, fresh enough sign-in', () => {
    expect(stepUpShortfall(user, rule, NOW)).toBeUndefined();
    expect(stepUpShortfall({ ...user, authTime: NOW_SEC - 300 }, rule, NOW)).toBeUndefined();
    expect(
      stepUpShortfall({ ...user, authTime: undefined }, { acr: ACR.mfa }, NOW),
    ).toBeUndefined();
  });

  it('names a weak or missing acr, and an old or unknown sign-in time', () => {
    expect(stepUpShortfall({ ...user, acr: ACR.password }, rule, NOW)).toBe('acr_too_weak');
    expect(stepUpShortfall({ ...user, acr: undefined }, rule, NOW)).toBe('acr_too_weak');
    expect(stepUpShortfall({ ...user, authTime: NOW_SEC - 301 }, rule, NOW)).toBe(
      'sign_in_too_old',
    );
    expect(stepUpShortfall({ ...user, authTime: undefined }, rule, NOW)).toBe('sign_in_too_old');
  });

  it('refuses credentials that are no user sign-in, whatever they carry', () => {
    expect(stepUpShortfall({ ...user, kind: 'client' }, rule, NOW)).toBe('no_user_sign_in');
    expect(stepUpShortfall({ ...user, kind: 'apiKey' }, rule, NOW)).toBe('no_user_sign_in');
  });
});

import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  chainResolvers,
  createAccessTokenVerifier,
  createJwtPrincipalResolver,
  createLocalKeySet,
  createTokenCache,
  resolveBearer,
  TokenError,
  type Principal,
} from '../src/index.js';
import { AUDIENCE, ISSUER, makeKey, mint, NOW, type TestKey } from './helpers.js';

describe('resolveBearer', () => {
  it('returns the token of a Bearer header, scheme in any case', () => {
    expect(resolveBearer('Bearer abc.def.ghi')).toBe('abc.def.ghi');
    expect(resolveBearer('bearer abc')).toBe('abc');
    expect(resolveBearer('BEARER a-b_c~d+e/f==')).toBe('a-b_c~d+e/f==');
    expect(resolveBearer(undefined)).toBeUndefined();
    expect(resolveBearer('')).toBeUndefined();
  });

  it('refuses other schemes and malformed headers with typed errors', () => {
    const codeOf = (header: string) => {
      try {
        resolveBearer(header);
      } catch (error) {
        expect(error).toBeInstanceOf(TokenError);
        return (error as TokenError).code;
      }
      return 'accepted';
    };
    expect(codeOf('Basic dXNlcjpwYXNz')).toBe('scheme_unsupported');
    expect(codeOf('Bearerabc')).toBe('scheme_unsupported');
    for (const header of [
      'Bearer',
      'Bearer ',
      'Bearer  abc',
      'Bearer abc def',
      'Bearer abc ',
      'Bearer a=b',
      'Bearer a\tb',
    ]) {
      expect(codeOf(header)).toBe('authorization_malformed');
    }
    const error = (() => {
      try {
        resolveBearer('Bearer  x');
      } catch (e) {
        return e as TokenError;
      }
    })();
    expect(error).toMatchObject({ status: 401, oauthError: 'invalid_request' });
  });
});

describe('createJwtPrincipalResolver', () => {
  let key: TestKey;
  beforeAll(async () => {
    key = await makeKey('ES256', 'k');
  });

  it('resolves a bearer JWT to a frozen, reused principal and leaves API keys to others', async () => {
    const verifier = createAccessTokenVerifier({
      issuer: ISSUER,
      audience: AUDIENCE,
      keys: createLocalKeySet({ keys: [key.publicJwk] }),
      now: () => NOW,
      cache: createTokenCache(),
    });
    const resolveJwt = createJwtPrincipalResolver(verifier);
    const token = await mint(key, {
      sub: 'client:svc',
      client_id: 'svc',
      roles: ['admin'],
      scope: 'api',
    });
    const first = await resolveJwt({ authorization: `Bearer ${token}` });
    expect(first).toMatchObject({ kind: 'client', subject: 'client:svc', authMethod: 'jwt' });
    expect(Object.isFrozen(first)).toBe(true);
    expect(await resolveJwt({ authorization: `Bearer ${token}` })).toBe(first);
    expect(await resolveJwt({})).toBeUndefined();

    const apiKeyPrincipal: Principal = {
      subject: 'key-1',
      kind: 'apiKey',
      roles: [],
      permissions: [],
      scope: [],
      authMethod: 'apiKey',
    };
    const resolve = chainResolvers(resolveJwt, async (input) =>
      input.authorization?.startsWith('Bearer sk_live_') ? apiKeyPrincipal : undefined,
    );
    expect(await resolve({ authorization: `Bearer sk_live_${'a'.repeat(43)}` })).toBe(
      apiKeyPrincipal,
    );
    await expect(resolve({ authorization: 'Bearer a.b.c' })).rejects.toMatchObject({
      code: 'token_malformed',
    });
  });
});

import { describe, expect, test } from '@jest/globals';
import { idTokenUser } from './id-token.js';

const jwt = (claims: Record<string, unknown>) =>
  `eyJhbGciOiJSUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
const expected = { issuer: 'http://auth.test', clientId: 'spa', nonce: 'n1' };
const good = {
  iss: 'http://auth.test',
  aud: 'spa',
  sub: 'u1',
  nonce: 'n1',
  email: 'a@b.c',
  name: 'A',
};

describe('idTokenUser', () => {
  test('takes sub, email and name of a token for this client and sign-in', () => {
    expect(idTokenUser(jwt(good), expected)).toEqual({ sub: 'u1', email: 'a@b.c', name: 'A' });
    expect(idTokenUser(jwt({ ...good, aud: ['x', 'spa'] }), expected)?.sub).toBe('u1');
    const { nonce: _n, ...refreshed } = good;
    expect(idTokenUser(jwt(refreshed), { issuer: expected.issuer, clientId: 'spa' })?.sub).toBe(
      'u1',
    );
  });

  test.each([
    ['another issuer', { ...good, iss: 'http://evil.test' }],
    ['another audience', { ...good, aud: 'other' }],
    ['another nonce', { ...good, nonce: 'n2' }],
    ['no subject', { ...good, sub: undefined }],
  ])('refuses %s', (_name, claims) => {
    expect(idTokenUser(jwt(claims), expected)).toBeUndefined();
  });

  test('refuses what is not a JWT', () => {
    expect(idTokenUser(undefined, expected)).toBeUndefined();
    expect(idTokenUser('abc', expected)).toBeUndefined();
    expect(idTokenUser('a.!!!.c', expected)).toBeUndefined();
  });
});

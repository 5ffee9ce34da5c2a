import { describe, expect, test } from '@jest/globals';
import { parseWebConfig, type ConfigError } from './config.js';

const problems = (env: Record<string, string>) => {
  try {
    parseWebConfig(env);
  } catch (e) {
    return (e as ConfigError).problems.map((p) => p.split(':')[0]).sort();
  }
  return [];
};

describe('web config', () => {
  test('defaults match the demo seed (demo-spa, http://localhost:5173/callback)', () => {
    const c = parseWebConfig({});
    expect(c).toMatchObject({
      port: 5173,
      origin: 'http://localhost:5173',
      redirectUri: 'http://localhost:5173/callback',
      issuer: 'http://localhost:4000',
      apiUrl: 'http://localhost:3000',
      apiAudience: 'http://localhost:3000',
      clientId: 'demo-spa',
      scope: 'openid profile email offline_access api',
      cookieKeys: undefined,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  test('names each invalid variable; empty means unset', () => {
    expect(
      problems({
        WEB_PORT: '70000',
        WEB_ORIGIN: 'http://localhost:5173/app',
        COOKIE_KEYS: 'short',
        API_URL: 'nope',
      }),
    ).toEqual(['API_URL', 'COOKIE_KEYS', 'WEB_ORIGIN', 'WEB_PORT']);
    expect(parseWebConfig({ WEB_PORT: '' }).port).toBe(5173);
  });

  test('WEB_ORIGIN follows WEB_PORT unless set', () => {
    expect(parseWebConfig({ WEB_PORT: '8080' })).toMatchObject({
      port: 8080,
      origin: 'http://localhost:8080',
      redirectUri: 'http://localhost:8080/callback',
    });
    const set = parseWebConfig({ WEB_PORT: '8080', WEB_ORIGIN: 'http://127.0.0.1:9000' });
    expect(set.origin).toBe('http://127.0.0.1:9000');
  });

  test('production wants https everywhere and explicit cookie keys', () => {
    expect(problems({ NODE_ENV: 'production' })).toEqual([
      'API_URL',
      'COOKIE_KEYS',
      'ISSUER',
      'WEB_ORIGIN',
    ]);
    const c = parseWebConfig({
      NODE_ENV: 'production',
      WEB_ORIGIN: 'https://app.example.com',
      ISSUER: 'https://auth.example.com/',
      API_URL: 'https://api.example.com',
      COOKIE_KEYS: `${'k'.repeat(32)}, ${'o'.repeat(32)}`,
    });
    expect(c.issuer).toBe('https://auth.example.com');
    expect(c.cookieKeys).toEqual(['k'.repeat(32), 'o'.repeat(32)]);
  });

  test('production refuses a placeholder cookie key', () => {
    expect(
      problems({
        NODE_ENV: 'production',
        WEB_ORIGIN: 'https://app.example.com',
        ISSUER: 'https://auth.example.com',
        API_URL: 'https://api.example.com',
        COOKIE_KEYS: `${'k'.repeat(32)},CHANGE_ME_AT_LEAST_32_CHARACTERS_LONG_KEY`,
      }),
    ).toEqual(['COOKIE_KEYS']);
  });
});

import { describe, expect, it } from '@jest/globals';
import { ConfigError, parseAuthConfig } from './config.js';

function problems(env: Record<string, string>): string[] {
  try {
    parseAuthConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('auth-server config', () => {
  it('uses the documented defaults', () => {
    const config = parseAuthConfig({});
    expect(config).toMatchObject({
      port: 4000,
      adminPort: 4001,
      issuer: 'http://localhost:4000',
      apiAudience: 'http://localhost:3000',
      dataDir: './data',
      accessTokenTtl: 900,
      signingAlg: 'RS256',
      seedDemo: true,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('lists every invalid variable by name', () => {
    const found = problems({ AUTH_PORT: 'abc', ISSUER: 'not a url', ACCESS_TOKEN_TTL: '3600' });
    expect(found.map((p) => p.split(':')[0]).sort()).toEqual([
      'ACCESS_TOKEN_TTL',
      'AUTH_PORT',
      'ISSUER',
    ]);
  });

  it('treats an empty variable as unset', () => {
    expect(parseAuthConfig({ DATABASE_URL: '' }).databaseUrl).toBeUndefined();
  });

  it('refuses insecure defaults in production', () => {
    const found = problems({ NODE_ENV: 'production', SEED_DEMO: 'true' });
    expect(found).toEqual(
      expect.arrayContaining([
        'ISSUER: must be https in production',
        'ADMIN_TOKEN: is required in production',
        'SEED_DEMO: demo seed is refused in production',
        'KEY_ENCRYPTION_KEY: is required in production',
      ]),
    );
  });

  it('accepts a complete production configuration without the demo seed', () => {
    const config = parseAuthConfig({
      NODE_ENV: 'production',
      ISSUER: 'https://auth.example.com',
      ADMIN_TOKEN: 'a'.repeat(40),
      COOKIE_KEYS: 'k'.repeat(40),
      KEY_ENCRYPTION_KEY: 'q'.repeat(43),
    });
    expect(config.seedDemo).toBe(false);
    expect(config.keyEncryptionKey).toBe('q'.repeat(43));
  });
});

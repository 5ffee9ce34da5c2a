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
      demoWebOrigin: 'http://localhost:5173',
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('LOG_FORMAT: json or pretty; unset leaves the choice to the terminal; anything else is named', () => {
    expect(parseAuthConfig({}).logFormat).toBeUndefined();
    expect(parseAuthConfig({ LOG_FORMAT: 'json' }).logFormat).toBe('json');
    expect(parseAuthConfig({ LOG_FORMAT: 'pretty' }).logFormat).toBe('pretty');
    expect(problems({ LOG_FORMAT: 'xml' })[0]).toMatch(/^LOG_FORMAT: /);
  });

  it("the demo seed's origin follows WEB_PORT, or WEB_ORIGIN when set", () => {
    expect(parseAuthConfig({ WEB_PORT: '8080' }).demoWebOrigin).toBe('http://localhost:8080');
    expect(
      parseAuthConfig({ WEB_PORT: '8080', WEB_ORIGIN: 'https://demo.example.com' }).demoWebOrigin,
    ).toBe('https://demo.example.com');
    expect(problems({ WEB_ORIGIN: 'https://demo.example.com/app' })).toEqual([
      'WEB_ORIGIN: must be an origin such as http://localhost:5173',
    ]);
  });

  it('lists every invalid variable by name', () => {
    const found = problems({ AUTH_PORT: 'abc', ISSUER: 'not a url', ACCESS_TOKEN_TTL: '3600' });
    expect(found.map((p) => p.split(':')[0]).sort()).toEqual([
      'ACCESS_TOKEN_TTL',
      'AUTH_PORT',
      'ISSUER',
    ]);
  });

  it('REQUIRE_PAR is off by default, on with true, and refuses anything else', () => {
    expect(parseAuthConfig({}).requirePar).toBe(false);
    expect(parseAuthConfig({ REQUIRE_PAR: 'true' }).requirePar).toBe(true);
    expect(problems({ REQUIRE_PAR: 'yes please' }).map((p) => p.split(':')[0])).toEqual([
      'REQUIRE_PAR',
    ]);
  });

  it('WEBAUTHN_RP_ID is the issuer host or a domain above it', () => {
    expect(parseAuthConfig({}).webauthnRpId).toBeUndefined();
    const issuer = 'https://auth.example.com';
    expect(parseAuthConfig({ ISSUER: issuer, WEBAUTHN_RP_ID: 'example.com' }).webauthnRpId).toBe(
      'example.com',
    );
    expect(problems({ ISSUER: issuer, WEBAUTHN_RP_ID: 'other.com' })).toEqual([
      "WEBAUTHN_RP_ID: must be the issuer's host (auth.example.com) or a domain above it",
    ]);
    expect(problems({ ISSUER: issuer, WEBAUTHN_RP_ID: 'ample.com' })).toHaveLength(1);
    expect(problems({ WEBAUTHN_RP_ID: 'https://localhost' })).toEqual([
      'WEBAUTHN_RP_ID: must be a lower-case host name',
    ]);
  });

  it('LOGIN_* and CLIENT_AUTH_* set the sign-in and client-authentication limits', () => {
    expect(parseAuthConfig({})).toMatchObject({
      signIn: { ipLimit: 20, accountLimit: 5, windowSec: 900 },
      clientAuth: { perAddress: 100, perClientAndAddress: 20, perClient: 200, windowSec: 900 },
    });
    const config = parseAuthConfig({
      LOGIN_ACCOUNT_LIMIT: '3',
      LOGIN_LIMIT_WINDOW: '60',
      CLIENT_AUTH_ADDRESS_LIMIT: '50',
      CLIENT_AUTH_CLIENT_ADDRESS_LIMIT: '7',
      CLIENT_AUTH_CLIENT_LIMIT: '70',
    });
    expect(config.signIn).toEqual({ ipLimit: 20, accountLimit: 3, windowSec: 60 });
    expect(config.clientAuth).toEqual({
      perAddress: 50,
      perClientAndAddress: 7,
      perClient: 70,
      windowSec: 900,
    });
    expect(
      problems({ LOGIN_IP_LIMIT: '0', CLIENT_AUTH_LIMIT_WINDOW: 'soon' })
        .map((p) => p.split(':')[0])
        .sort(),
    ).toEqual(['CLIENT_AUTH_LIMIT_WINDOW', 'LOGIN_IP_LIMIT']);
  });

  it('CLIENT_AUTH_IP_LIMIT, which counted per client and address, is refused naming its successors', () => {
    expect(problems({ CLIENT_AUTH_IP_LIMIT: '7' })).toEqual([
      'CLIENT_AUTH_IP_LIMIT: was renamed: CLIENT_AUTH_CLIENT_ADDRESS_LIMIT counts per client and address, CLIENT_AUTH_ADDRESS_LIMIT per address',
    ]);
  });

  it('CLIENT_ASSERTION_MAX_LIFETIME is an hour by default, at most an hour', () => {
    expect(parseAuthConfig({}).clientAssertionMaxLifetime).toBe(3600);
    expect(
      parseAuthConfig({ CLIENT_ASSERTION_MAX_LIFETIME: '300' }).clientAssertionMaxLifetime,
    ).toBe(300);
    expect(problems({ CLIENT_ASSERTION_MAX_LIFETIME: '86400' })).toEqual([
      expect.stringMatching(/^CLIENT_ASSERTION_MAX_LIFETIME: /),
    ]);
  });

  it('TRUST_PROXY is off unless set to true, read as the API reads it', () => {
    expect(parseAuthConfig({}).trustProxy).toBe(false);
    expect(parseAuthConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(parseAuthConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(problems({ TRUST_PROXY: 'yes' }).map((p) => p.split(':')[0])).toEqual(['TRUST_PROXY']);
  });

  it('RESOURCES is retired: set, the start is refused with the way to register APIs', () => {
    expect(problems({})).toEqual([]);
    const refused = problems({ RESOURCES: '{"https://ledger.example.com":"orders:read"}' });
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatch(
      /^RESOURCES: is retired: register each API with POST \/admin\/resources/,
    );
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

  it('refuses the placeholder secrets of a template in production, naming each', () => {
    const found = problems({
      NODE_ENV: 'production',
      ISSUER: 'https://auth.example.com',
      DATABASE_URL: 'postgres://portcullis:CHANGE_ME@postgres:5432/portcullis',
      ADMIN_TOKEN: 'CHANGE_ME_AT_LEAST_32_CHARACTERS_LONG_TOKEN',
      COOKIE_KEYS: 'changeme-changeme-changeme-changeme',
      KEY_ENCRYPTION_KEY: 'CHANGE_ME_43_CHARACTERS_OF_BASE64URL_32_BYT',
    });
    expect(found.map((p) => p.split(':')[0])).toEqual([
      'ADMIN_TOKEN',
      'COOKIE_KEYS',
      'KEY_ENCRYPTION_KEY',
      'DATABASE_URL',
    ]);
    expect(found[0]).toContain('openssl rand -base64 32');
    // Outside production the same values are a developer's business.
    expect(problems({ ADMIN_TOKEN: 'CHANGE_ME_AT_LEAST_32_CHARACTERS_LONG_TOKEN' })).toEqual([]);
  });

  it('binds the admin API to loopback unless ADMIN_HOST says otherwise', () => {
    expect(parseAuthConfig({}).adminHost).toBe('127.0.0.1');
    expect(parseAuthConfig({ ADMIN_HOST: '0.0.0.0' }).adminHost).toBe('0.0.0.0');
    expect(problems({ ADMIN_HOST: 'everywhere' }).map((p) => p.split(':')[0])).toEqual([
      'ADMIN_HOST',
    ]);
  });
});

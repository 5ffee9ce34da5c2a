import { describe, expect, it } from '@jest/globals';
import { ConfigError, parseApiConfig } from './config.js';

describe('api config', () => {
  it('derives the JWKS URL from the issuer and defaults the audience', () => {
    const config = parseApiConfig({ ISSUER: 'https://auth.example.com' });
    expect(config.jwksUrl).toBe('https://auth.example.com/.well-known/jwks.json');
    expect(config.audience).toBe('http://localhost:3000');
    expect(config.port).toBe(3000);
    expect(config.corsOrigins).toEqual([]);
  });

  it('names each invalid variable', () => {
    const error = (() => {
      try {
        parseApiConfig({ API_PORT: '70000', REDIS_URL: 'http://x', TRUST_PROXY: 'yes' });
      } catch (e) {
        return e as ConfigError;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'API_PORT',
      'REDIS_URL',
      'TRUST_PROXY',
    ]);
  });

  it('lists every production problem at once', () => {
    let error: unknown;
    try {
      parseApiConfig({ NODE_ENV: 'production' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'ISSUER: must be https in production',
      'UPLOAD_SIGNING_KEY: required in production',
    ]);
  });

  it('enforces step-up by default, and refuses STEP_UP=off in production', () => {
    expect(parseApiConfig({}).stepUp).toEqual({
      enforced: true,
      maxAgeSec: 300,
      paymentAmount: 50_000,
    });
    expect(parseApiConfig({ STEP_UP: 'off' }).stepUp.enforced).toBe(false);
    let error: unknown;
    try {
      parseApiConfig({
        NODE_ENV: 'production',
        ISSUER: 'https://auth.example.com',
        UPLOAD_SIGNING_KEY: 'k'.repeat(32),
        STEP_UP: 'off',
      });
    } catch (e) {
      error = e;
    }
    expect((error as ConfigError).problems).toEqual(['STEP_UP: off is not allowed in production']);
  });

  it('splits CORS origins', () => {
    expect(parseApiConfig({ CORS_ORIGINS: 'http://a.test, http://b.test' }).corsOrigins).toEqual([
      'http://a.test',
      'http://b.test',
    ]);
  });
});

import { describe, expect, it } from '@jest/globals';
import { placeholderSecrets } from './placeholder-secrets.js';

const real = 'q3VwHn0Zb8yE1kXcTg5sR2mJ7aLpD4uF9oWiNe6tYhB';
const names = (env: Record<string, string>) =>
  placeholderSecrets(env, Object.keys(env)).map((p) => p.name);

describe('placeholderSecrets', () => {
  it.each([
    'CHANGE_ME',
    'CHANGE_ME_AT_LEAST_32_CHARACTERS_LONG_TOKEN',
    'changeme-changeme-changeme-changeme',
    'change-me-to-a-long-random-string-please',
    'an-example-secret-that-is-long-enough-xx',
    '<generate with openssl rand -base64 32>',
    'your-secret-here-your-secret-here-32chars',
    'short',
  ])('refuses %j, naming the variable', (value) => {
    const [problem] = placeholderSecrets({ ADMIN_TOKEN: value }, ['ADMIN_TOKEN']);
    expect(problem?.name).toBe('ADMIN_TOKEN');
    expect(problem?.message).toContain('openssl rand -base64 32');
  });

  it('accepts generated values and skips unset ones', () => {
    expect(names({ ADMIN_TOKEN: real, COOKIE_KEYS: `${real},${real.toLowerCase()}` })).toEqual([]);
    expect(placeholderSecrets({}, ['ADMIN_TOKEN'])).toEqual([]);
  });

  it('checks each key of a list and says so for an empty value', () => {
    expect(names({ COOKIE_KEYS: `${real},CHANGE_ME` })).toEqual(['COOKIE_KEYS']);
    expect(placeholderSecrets({ K: '' }, ['K'])[0]?.message).toMatch(/^is empty/);
  });

  it("checks a URL's password for placeholder words only", () => {
    expect(names({ DATABASE_URL: 'postgres://portcullis:CHANGE_ME@postgres:5432/db' })).toEqual([
      'DATABASE_URL',
    ]);
    expect(names({ REDIS_URL: 'redis://:change-me@redis:6379' })).toEqual(['REDIS_URL']);
    expect(names({ DATABASE_URL: 'postgres://app:s3cr3t@db.internal:5432/app' })).toEqual([]);
    expect(names({ REDIS_URL: 'redis://redis:6379' })).toEqual([]);
  });
});

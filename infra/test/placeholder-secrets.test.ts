/**
 * A deployment started with a template's secrets (the CHANGE_ME values a manifest or .env
 * example carries) does not start: each app exits 78 naming every such variable.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnScript } from './helpers/processes.js';

const TEMPLATE = {
  NODE_ENV: 'production',
  ISSUER: 'https://auth.example.com',
  API_AUDIENCE: 'https://api.example.com',
  DATABASE_URL: 'postgres://portcullis:CHANGE_ME@127.0.0.1:9/portcullis',
  ADMIN_TOKEN: 'CHANGE_ME_AT_LEAST_32_CHARACTERS_LONG_TOKEN',
  COOKIE_KEYS: 'CHANGE_ME_AT_LEAST_32_CHARACTERS_LONG_KEY',
  KEY_ENCRYPTION_KEY: 'CHANGE_ME_43_CHARACTERS_OF_BASE64URL_32_BYT',
  UPLOAD_SIGNING_KEY: 'CHANGE_ME_AT_LEAST_32_CHARACTERS_LONG_SECRET',
  LOG_LEVEL: 'warn',
};

describe('placeholder secrets in production', () => {
  it.each([
    ['apps/auth-server/src/main.ts', ['ADMIN_TOKEN', 'COOKIE_KEYS', 'KEY_ENCRYPTION_KEY']],
    ['apps/api/src/main.ts', ['UPLOAD_SIGNING_KEY']],
  ])(
    '%s exits 78 naming each placeholder variable',
    async (main, variables) => {
      const p = await spawnScript(main, TEMPLATE);
      expect(await p.exited).toBe(78);
      for (const name of [...variables, 'DATABASE_URL']) {
        expect(p.output()).toMatch(new RegExp(`^  ${name}: .*placeholder`, 'm'));
      }
    },
    60_000,
  );
});

import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger, scrubText } from './logger.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), text: () => lines.join('') };
}

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1MSJ9.c2lnbmF0dXJlLXZhbHVl';
const API_KEY = `sk_live_${'a'.repeat(43)}`;

describe('createLogger', () => {
  it('redacts credential fields at the top level and one level down', () => {
    const { logger, text } = capture();
    logger.info({
      password: 'hunter2-password',
      client_secret: 'client-secret-value',
      body: { refresh_token: 'refresh-token-value', access_token: 'access-token-value' },
      user: { apiKey: 'api-key-value', email: 'a@example.com' },
    });
    const out = text();
    for (const secret of [
      'hunter2-password',
      'client-secret-value',
      'refresh-token-value',
      'access-token-value',
      'api-key-value',
    ]) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain('a@example.com');
    expect(out).toContain('[Redacted]');
  });

  it('redacts authorization, cookie and set-cookie headers wherever headers are logged', () => {
    const { logger, text } = capture();
    const headers = {
      authorization: `Bearer ${JWT}`,
      cookie: 'sid=session-cookie-value',
      'set-cookie': ['sid=new-session-value; HttpOnly'],
      'user-agent': 'jest',
    };
    logger.info({ req: { headers }, res: { headers } });
    logger.info({ headers });
    const out = text();
    expect(out).not.toContain('session-cookie-value');
    expect(out).not.toContain('new-session-value');
    expect(out).not.toContain(JWT);
    expect(out).toContain('jest');
  });

  it('scrubs token-shaped text from messages and errors', () => {
    const { logger, text } = capture();
    logger.warn(`could not verify ${JWT}`);
    logger.error({ err: new Error(`bad key ${API_KEY}`) }, 'failed');
    const out = text();
    expect(out).not.toContain(JWT);
    expect(out).not.toContain(API_KEY);
    expect(out).toContain('could not verify [Redacted]');
    expect(scrubText(`x ${API_KEY} y`)).toBe('x [Redacted] y');
  });
});

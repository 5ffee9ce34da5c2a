import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger, scrubText } from './logger.js';

function capture(format?: 'json' | 'pretty') {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return {
    logger: createLogger({ level: 'debug', destination, format }),
    text: () => lines.join(''),
  };
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

describe('one-time codes and DPoP proofs', () => {
  const CODE = 'Xq3vT0kA9sFj2LwM7pRc1ZbN8eYhU5dG4oIiK6nVtWs';
  const PROOF = `eyJ0eXAiOiJkcG9wK2p3dCJ9.eyJodG0iOiJQT1NUIn0.${'p'.repeat(40)}`;

  it('redacts codes in request parameters, DPoP fields and the DPoP header', () => {
    const { logger, text } = capture();
    logger.info({ body: { code: CODE, state: 'kept-state' }, query: { code: CODE } });
    logger.info({ req: { body: { code: CODE } }, dpop: PROOF, form: { totp: '123456' } });
    logger.info({ headers: { DPoP: PROOF }, req: { headers: { dpop: PROOF } } });
    logger.info({ recovery_code: 'recovery-code-value', user_code: 'WDJB-MJHT' });
    const out = text();
    for (const secret of [CODE, PROOF, '123456', 'recovery-code-value', 'WDJB-MJHT']) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain('kept-state');
  });

  it('keeps an error code, which names the failure', () => {
    const { logger, text } = capture();
    logger.error({ err: Object.assign(new Error('reset'), { code: 'ECONNRESET' }), code: 'E1' });
    expect(text()).toContain('"code":"ECONNRESET"');
    expect(text()).toContain('"code":"E1"');
  });

  it('scrubs codes and proofs quoted in messages and error texts', () => {
    const { logger, text } = capture();
    logger.warn(`callback failed: GET /cb?state=s&code=${CODE}`);
    logger.error({ err: new Error(`bad body code=${CODE}&dpop=${PROOF}`) }, 'failed');
    const out = text();
    expect(out).not.toContain(CODE);
    expect(out).not.toContain(PROOF);
    expect(out).toContain('state=s&code=[Redacted]');
  });

  it('leaves out the raw request bytes of an HTTP parser error, at any depth', () => {
    const { logger, text } = capture();
    const raw = Buffer.from(`GET /?code=${CODE} HTTP/1.1\r\nAuthorization: Bearer ${JWT}\r\n`);
    const parseError = Object.assign(new Error('Parse Error: Invalid character in chunk size'), {
      code: 'HPE_INVALID_CHUNK_SIZE',
      rawPacket: raw,
    });
    logger.error({ err: parseError }, 'response failed');
    logger.error({ err: Object.assign(new Error('outer'), { inner: parseError, bytes: raw }) });
    const out = text();
    expect(out).toContain('HPE_INVALID_CHUNK_SIZE');
    expect(out).not.toContain('rawPacket');
    expect(out).not.toContain(Array.from(raw.subarray(0, 12)).join(','));
    expect(out).not.toContain(CODE);
    expect(parseError.rawPacket).toBe(raw);
  });
});

describe('LOG_FORMAT', () => {
  const CODE = 'Xq3vT0kA9sFj2LwM7pRc1ZbN8eYhU5dG4oIiK6nVtWs';

  it('json: one object a line (the default for a stream that is not a terminal)', () => {
    for (const format of ['json', undefined] as const) {
      const { logger, text } = capture(format);
      logger.info({ port: 4000 }, 'listening');
      expect(JSON.parse(text())).toMatchObject({ level: 30, msg: 'listening', port: 4000 });
    }
  });

  it('pretty: a readable line with a clock time instead of epoch milliseconds', () => {
    const { logger, text } = capture('pretty');
    logger.info({ port: 4000 }, 'listening');
    const out = text();
    expect(out).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: listening \{"port":4000\}\n$/);
    expect(out).not.toMatch(/"time":\d+/);
  });

  it('pretty: redacts as json does, fields, headers, texts and errors', () => {
    const { logger, text } = capture('pretty');
    logger.info({
      password: 'hunter2-password',
      body: { refresh_token: 'refresh-token-value', code: CODE },
      req: { headers: { authorization: `Bearer ${JWT}`, cookie: 'sid=session-cookie-value' } },
    });
    logger.warn(`could not verify ${JWT}`);
    logger.error({ err: new Error(`bad key ${API_KEY}`) }, 'failed');
    const out = text();
    for (const secret of [
      'hunter2-password',
      'refresh-token-value',
      CODE,
      JWT,
      'session-cookie-value',
      API_KEY,
    ]) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain('[Redacted]');
  });
});

/**
 * Tokens, authorization codes and DPoP proofs never reach a log, in any encoding: requests
 * carrying them, well-formed and with broken HTTP framing (which Node's parser reports with
 * the raw request bytes attached), are sent to both apps, and each app's whole log (as
 * createLogger writes it, at debug) is searched for them.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair } from 'jose';
import { until } from '@portcullis/testing';
import { startTestApi, type AuthServerTestApi } from '../../apps/api/test/helpers/harness.js';
import { capturedLogger, encodingsOf, rawExchange } from './helpers/raw-http.js';

const authLog = capturedLogger();
const apiLog = capturedLogger();
let api: AuthServerTestApi;
let proof: string;
/** A valid access token, so that the API reads the body (where framing errors show). */
let TOKEN: string;
const CODE = randomBytes(32).toString('base64url');

beforeAll(async () => {
  api = await startTestApi({ logger: authLog.logger, deps: { logger: apiLog.logger } });
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  proof = await new SignJWT({ htm: 'POST', htu: `${api.url}/orders`, jti: 'j1' })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: await exportJWK(publicKey) })
    .setIssuedAt()
    .sign(privateKey);
  TOKEN = await api.token('log-secrets', ['editor']);
});
afterAll(() => api?.close());

/** A request head with the secrets in the query and the headers. */
const head = (method: string, path: string, extra: string[]) =>
  [
    `${method} ${path}?code=${CODE}&state=s HTTP/1.1`,
    'Host: 127.0.0.1',
    `Authorization: Bearer ${TOKEN}`,
    `DPoP: ${proof}`,
    ...extra,
    '',
    '',
  ].join('\r\n');

/** Chunked framing broken after a first chunk that carries the code. */
function badChunks(method: string, path: string, type: string, body: string) {
  const chunk = `${body.length.toString(16)}\r\n${body}\r\n`;
  return `${head(method, path, [`Content-Type: ${type}`, 'Transfer-Encoding: chunked'])}${chunk}zz\r\n`;
}

const cases = (path: string, type: string, body: string) => ({
  'well-formed': `${head('POST', path, [`Content-Type: ${type}`, `Content-Length: ${body.length}`, 'Connection: close'])}${body}`,
  'an invalid chunk size (HPE_INVALID_CHUNK_SIZE)': badChunks('POST', path, type, body),
  'an invalid header name (HPE_INVALID_HEADER_TOKEN)': head('GET', path, ['Bad Header: x']),
  'Content-Length with Transfer-Encoding (HPE_UNEXPECTED_CONTENT_LENGTH)': head('POST', path, [
    'Content-Length: 4',
    'Transfer-Encoding: chunked',
  ]),
});

describe.each([
  {
    app: 'api',
    url: () => api.url,
    log: apiLog,
    requests: () => cases('/orders', 'application/json', `{"code":"${CODE}","dpop":"${proof}"}`),
  },
  {
    app: 'auth server',
    url: () => api.auth.url,
    log: authLog,
    requests: () =>
      cases(
        '/token',
        'application/x-www-form-urlencoded',
        `grant_type=authorization_code&code=${CODE}&client_id=c&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb`,
      ),
  },
])('$app', ({ url, log, requests }) => {
  test('requests carrying a token, a code and a DPoP proof leave none of them in the log', async () => {
    for (const [name, bytes] of Object.entries(requests())) {
      const answer = await rawExchange(url(), bytes);
      expect({ name, status: /^HTTP\/1\.1 (\d+)/.exec(answer)?.[1] }).toEqual({
        name,
        status: expect.stringMatching(/^4\d\d$/),
      });
    }
    // The malformed requests were logged (so the search below looks at their lines).
    const text = await until(
      async () => log.text(),
      (t) => t.includes('HPE_INVALID_CHUNK_SIZE') && t.includes('HPE_INVALID_HEADER_TOKEN'),
      5000,
    );
    expect(text).toContain('HPE_INVALID_CHUNK_SIZE');
    expect(text).toContain('HPE_INVALID_HEADER_TOKEN');
    for (const [secret, value] of Object.entries({ TOKEN, CODE, proof })) {
      for (const encoded of encodingsOf(value)) {
        expect({ secret, encoded, found: text.includes(encoded) }).toEqual({
          secret,
          encoded,
          found: false,
        });
      }
    }
  });
});

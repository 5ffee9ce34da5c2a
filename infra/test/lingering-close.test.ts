/**
 * A refusal sent before the request's body was read (413) reaches a client that writes its
 * whole request before reading: the server closes in stages (RFC 9112 §9.6, README
 * "Operating it"), not with a reset that discards the answer (EPIPE at the client).
 */
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startTestApi, type AuthServerTestApi } from '../../apps/api/test/helpers/harness.js';
import { writeAllThenRead } from './helpers/raw-http.js';

let api: AuthServerTestApi;
let token: string;
beforeAll(async () => {
  api = await startTestApi({ env: { UPLOAD_MAX_BYTES: String(256 * 1024) } });
  token = await api.token('lingering-close', ['editor']);
});
afterAll(() => api?.close());

const head = (path: string, type: string, length: number) =>
  [
    `POST ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    `Authorization: Bearer ${token}`,
    `Content-Type: ${type}`,
    `Content-Length: ${length}`,
    '',
    '',
  ].join('\r\n');

test.each([
  ['a JSON body over its 64 kB limit', '/orders', 'application/json'],
  ['an upload over UPLOAD_MAX_BYTES', '/uploads', 'multipart/form-data; boundary=b'],
])('%s: the client reads the 413, then the connection closes', async (_name, path, type) => {
  for (const bytes of [1 << 20, 8 << 20]) {
    const answer = await writeAllThenRead(api.url, head(path, type, bytes), bytes);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/connection: close/i);
    expect(answer).toContain('"error":"payload_too_large"');
  }
});

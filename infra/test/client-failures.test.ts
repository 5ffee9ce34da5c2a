/**
 * An upload whose client goes away mid-body, on the real API: logged as such, at debug
 * without a stack, and not as a server error (Node's parser reports the cut-off body).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { until } from '@portcullis/testing';
import { startTestApi, type AuthServerTestApi } from '../../apps/api/test/helpers/harness.js';
import { capturedLogger } from './helpers/raw-http.js';

const KiB = 1024;
const apiLog = capturedLogger();
let api: AuthServerTestApi;
let dir: string;
let token: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'portcullis-aborts-'));
  api = await startTestApi({
    env: { UPLOADS_DIR: dir },
    deps: { logger: apiLog.logger },
  });
  token = await api.token('aborts', ['editor'], { scope: 'uploads:read uploads:create' });
});
afterAll(async () => {
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a client that goes away mid-upload', () => {
  test('is logged at debug, without a stack, and not as a server error', async () => {
    const before = apiLog.text().length;
    await new Promise<void>((resolve) => {
      const req = request(`${api.url}/uploads`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'multipart/form-data; boundary=x',
          'content-length': String(32 * KiB),
        },
      });
      req.on('error', () => resolve());
      req.write(
        '--x\r\nContent-Disposition: form-data; name="file"; filename="a.bin"\r\n' +
          'Content-Type: application/octet-stream\r\n\r\n' +
          'a'.repeat(8 * KiB),
        () => setTimeout(() => req.destroy(), 100),
      );
    });
    const lines = await until(
      async () =>
        apiLog
          .text()
          .slice(before)
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>),
      (found) => found.some((line) => line['msg'] === 'request'),
      5000,
    );
    expect(lines.find((line) => line['msg'] === 'request')).toMatchObject({ status: 400 });
    expect(lines.filter((line) => (line['level'] as number) >= 40)).toEqual([]);
    expect(JSON.stringify(lines)).not.toMatch(/"stack"/);
  });
});

/**
 * UPLOADS_STORE=s3: two API instances on one database and one S3-compatible bucket (s3rver
 * on 127.0.0.1) behave as one service. A file uploaded through one is downloaded through the
 * other; a refused or aborted upload leaves no object, as on local disk.
 */
import { createHash, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { until } from '@portcullis/testing';
import { Readable } from 'node:stream';
import { startApiServer, type RunningApiServer } from '../src/index.js';
import { createUrlSigner } from '../src/storage/presign.js';
import { createS3Client, S3Storage } from '../src/storage/s3.js';
import { BlobTooLargeError } from '../src/storage/storage.js';
import { startTestApi, type TestApi } from './helpers/harness.js';
import { startTestS3, type TestS3 } from './helpers/s3-server.js';

const MiB = 1024 * 1024;
// Above S3's 5 MiB part: the larger uploads go through a multipart upload.
const MAX = 8 * MiB;
let s3: TestS3;
let a: TestApi;
let b: RunningApiServer;
let token: string;

beforeAll(async () => {
  s3 = await startTestS3();
  a = await startTestApi({ env: { ...s3.env, UPLOAD_MAX_BYTES: String(MAX) } });
  // The second instance: same configuration, same database, its own process state.
  b = await startApiServer(a.config, {
    db: a.database.db,
    logger: pino({ level: 'silent' }),
  });
  token = await a.token('s3-uploader', ['editor']);
}, 60_000);
afterAll(async () => {
  await b?.close();
  await a?.close();
  await s3?.close();
});

const auth = () => ({ authorization: `Bearer ${token}` });

async function upload(url: string, bytes: Buffer, filename: string, type: string) {
  const form = new FormData();
  form.append('file', new Blob([bytes], { type }), filename);
  const res = await fetch(`${url}/uploads`, { method: 'POST', headers: auth(), body: form });
  return { status: res.status, body: (await res.json()) as { id: string; sha256: string } };
}

describe('uploads in an S3 bucket shared by two API instances', () => {
  test.each([
    ['a small file', 1000],
    ['a multipart-sized file', 6 * MiB],
  ])(
    '%s uploaded through A downloads through B',
    async (_name, size) => {
      const bytes = randomBytes(size);
      const sent = await upload(a.url, bytes, 'report.pdf', 'application/pdf');
      expect(sent.status).toBe(201);
      expect(sent.body.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(await s3.keys()).toContain(sent.body.id);

      const res = await fetch(`${b.url}/uploads/${sent.body.id}/content`, { headers: auth() });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      expect(res.headers.get('content-length')).toBe(String(size));
      expect(res.headers.get('content-disposition')).toContain('filename="report.pdf"');
      expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
    },
    60_000,
  );

  test('a direct upload presigned by B and PUT to A downloads through B', async () => {
    const bytes = randomBytes(50_000);
    const presigned = await fetch(`${b.url}/uploads/presign`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ filename: 'a.csv', contentType: 'text/csv', size: bytes.length }),
    });
    expect(presigned.status).toBe(201);
    const { uploadId, url } = (await presigned.json()) as { uploadId: string; url: string };
    const put = await fetch(`${a.url}${url}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    expect(put.status).toBe(200);
    const res = await fetch(`${b.url}/uploads/${uploadId}/content`, { headers: auth() });
    expect(res.headers.get('content-type')).toBe('text/csv');
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  });

  test('an upload over UPLOAD_MAX_BYTES is refused (413) and leaves no object', async () => {
    const before = await s3.keys();
    // Past a first 5 MiB part: the multipart upload had begun when the cap was reached.
    const sent = await upload(a.url, randomBytes(MAX + MiB), 'big.bin', 'application/zip');
    expect(sent.status).toBe(413);
    expect(await s3.keys()).toEqual(before);
  }, 60_000);

  test('an upload whose client goes away mid-body leaves no object', async () => {
    const before = await s3.keys();
    const head = Buffer.from(
      `--XX\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n` +
        `Content-Type: application/octet-stream\r\n\r\n`,
    );
    const closed = new Promise<void>((resolve) => {
      const req = request(`${b.url}/uploads`, {
        method: 'POST',
        headers: {
          ...auth(),
          'content-type': 'multipart/form-data; boundary=XX',
          'content-length': String(head.length + 2 * MiB),
        },
      });
      req.on('error', () => resolve());
      req.on('close', () => resolve());
      req.write(head);
      req.write(randomBytes(MiB));
      // Long enough for the server to have handed the file part to the store.
      setTimeout(() => req.destroy(), 300);
    });
    await closed;
    // The server notices the reset and finishes the request (to nobody) a moment later.
    const metrics = () => fetch(`${b.url}/metrics`).then((r) => r.text());
    const answered = await until(metrics, (text) => text.includes('route="/uploads"'), 5000);
    expect(answered).toMatch(
      /http_requests_total\{method="POST",route="\/uploads",status="4\d\d"\}/,
    );
    expect(await s3.keys()).toEqual(before);
  });
});

describe('S3Storage itself', () => {
  const store = () =>
    new S3Storage(
      createS3Client(a.config.uploads.s3!),
      s3.bucket,
      createUrlSigner(() => Promise.resolve(Buffer.alloc(32)), Date.now),
      Date.now,
    );
  /** `parts` as a stream, failing with `error` after them when given. */
  function source(parts: Buffer[], error?: Error) {
    return Readable.from(
      (async function* () {
        yield* parts;
        if (error) throw error;
      })(),
    );
  }

  test('puts, gets and deletes; the size and hash are of the bytes streamed', async () => {
    const bytes = randomBytes(6 * MiB);
    const blob = await store().put('store-roundtrip', source([bytes]), { maxBytes: MAX });
    expect(blob).toEqual({
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    const chunks: Buffer[] = [];
    for await (const chunk of await store().get('store-roundtrip')) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).equals(bytes)).toBe(true);
    await store().delete('store-roundtrip');
    expect(await s3.keys()).not.toContain('store-roundtrip');
  }, 60_000);

  test.each([
    ['one byte over the cap', 1000],
    ['over the cap after a first 5 MiB part', 6 * MiB],
  ])(
    'a put %s fails with BlobTooLargeError and leaves no object',
    async (_name, maxBytes) => {
      const parts = [randomBytes(maxBytes), randomBytes(1)];
      await expect(
        store().put('store-too-large', source(parts), { maxBytes }),
      ).rejects.toBeInstanceOf(BlobTooLargeError);
      expect(await s3.keys()).not.toContain('store-too-large');
    },
    60_000,
  );

  test('a put whose source fails midway fails with that error and leaves no object', async () => {
    const gone = new Error('client went away');
    const parts = [randomBytes(3 * MiB), randomBytes(3 * MiB)];
    await expect(store().put('store-aborted', source(parts, gone), { maxBytes: MAX })).rejects.toBe(
      gone,
    );
    expect(await s3.keys()).not.toContain('store-aborted');
  }, 60_000);

  test('refuses a key that is not one of ours', async () => {
    await expect(store().put('../x', source([]), { maxBytes: 1 })).rejects.toThrow(
      'invalid storage key',
    );
  });
});

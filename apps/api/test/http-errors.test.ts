import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { newOrderBody } from './helpers/factories.js';
import { startTestApi, type TestApi } from './helpers/harness.js';

let api: TestApi;
let editor: string;

beforeAll(async () => {
  api = await startTestApi({ env: { CORS_ORIGINS: 'https://app.example.test' } });
  editor = await api.token('http-editor', ['editor']);
});
afterAll(() => api.close());

describe('request bodies', () => {
  test('malformed JSON -> 400 malformed_json', async () => {
    const res = await api.request('POST', '/orders', {
      token: editor,
      raw: '{"customer": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'malformed_json', message: 'the body is not valid JSON' });
  });

  test('a body that is not JSON -> 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await api.request('POST', '/orders', {
        token: editor,
        raw: 'customer=x',
        headers: { 'content-type': type },
      });
      expect(res.status).toBe(415);
      expect(res.body.error).toBe('unsupported_media_type');
    }
  });

  test('a body over 64 KiB -> 413', async () => {
    const res = await api.request('POST', '/orders', {
      token: editor,
      body: newOrderBody({ note: 'x'.repeat(70_000) }),
    });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe('payload_too_large');
  });

  test('a JSON scalar or array body -> 400 or 422, never 500', async () => {
    const scalar = await api.request('POST', '/orders', {
      token: editor,
      raw: '"text"',
      headers: { 'content-type': 'application/json' },
    });
    expect(scalar.status).toBe(400);
    const array = await api.request('POST', '/orders', {
      token: editor,
      raw: '[]',
      headers: { 'content-type': 'application/json' },
    });
    expect(array.status).toBe(422);
  });
});

describe('routing and headers', () => {
  test('unknown path -> 404 JSON; wrong method -> 405 with Allow', async () => {
    const missing = await api.request('GET', '/nope', { token: editor });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'not_found' });
    const wrong = await api.request('PUT', '/orders', { token: editor, body: newOrderBody() });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toMatch(/GET/);
    expect(wrong.body).toEqual({ error: 'method_not_allowed' });
  });

  test('state changes never use GET: GET /orders/:id/cancel is 405', async () => {
    const order = (await api.request('POST', '/orders', { token: editor, body: newOrderBody() }))
      .body;
    const res = await api.request('GET', `/orders/${order.id}/cancel`, { token: editor });
    expect(res.status).toBe(405);
    expect((await api.request('GET', `/orders/${order.id}`, { token: editor })).body.status).toBe(
      'pending',
    );
  });

  test('security headers on success, error and 404 responses', async () => {
    for (const res of [
      await api.request('GET', '/orders', { token: editor }),
      await api.request('GET', '/orders'),
      await api.request('GET', '/nope'),
      await api.request('GET', '/healthz'),
    ]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-security-policy')).toBe(
        "default-src 'none'; frame-ancestors 'none'",
      );
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    }
  });

  test('CORS only for configured origins', async () => {
    const allowed = await api.request('OPTIONS', '/orders', {
      headers: {
        origin: 'https://app.example.test',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example.test');
    expect(allowed.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    const simple = await api.request('GET', '/orders', {
      token: editor,
      headers: { origin: 'https://app.example.test' },
    });
    expect(simple.headers.get('access-control-allow-origin')).toBe('https://app.example.test');
    expect(simple.headers.get('access-control-expose-headers')).toMatch(/ETag/);

    const evil = await api.request('GET', '/orders', {
      token: editor,
      headers: { origin: 'https://evil.test' },
    });
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();
    const evilPreflight = await api.request('OPTIONS', '/orders', {
      headers: { origin: 'https://evil.test', 'access-control-request-method': 'DELETE' },
    });
    expect(evilPreflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('a cacheable answer varies by origin and caller, however often its Vary was seen', async () => {
    const order = (await api.request('POST', '/orders', { token: editor, body: newOrderBody() }))
      .body;
    for (const origin of [undefined, 'https://app.example.test', undefined, 'https://evil.test']) {
      for (let i = 0; i < 2; i++) {
        const res = await api.request('GET', `/orders/${order.id}`, {
          token: editor,
          headers: origin === undefined ? {} : { origin },
        });
        expect(res.status).toBe(200);
        expect(res.headers.get('vary')).toBe('Origin, Authorization, Cookie');
      }
    }
  });
});

describe('unexpected failures', () => {
  test('an unknown error -> generic 500 without stack or message', async () => {
    const broken = await startTestApiWithBrokenResolver();
    try {
      const res = await broken.request('GET', '/orders', { token: 'x' });
      expect(res.status).toBe(500);
      expect(res.text).toBe('{"error":"internal_error"}');
    } finally {
      await broken.close();
    }
  });
});

async function startTestApiWithBrokenResolver() {
  return startTestApi({
    deps: {
      resolvers: [
        async () => {
          throw new Error('database password is hunter2 at /srv/app/secret.ts:12');
        },
      ],
    },
  });
}

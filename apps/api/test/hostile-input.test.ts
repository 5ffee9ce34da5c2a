/**
 * Input a client controls never reaches a 500: prototype-named keys, bodies that do not
 * decode, and NUL characters (which PostgreSQL refuses in text) are each a clear 4xx.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { newOrderBody } from './helpers/factories.js';
import { startTestApi, type TestApi } from './helpers/harness.js';

let api: TestApi;
let admin: string;

beforeAll(async () => {
  api = await startTestApi();
  admin = await api.token('hostile-admin', ['admin']);
});
afterAll(() => api.close());

const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];

describe('prototype-named keys', () => {
  test.each(['/orders', '/payments', '/users', '/events', '/api-keys'])(
    'GET %s?<prototype key>=x -> 422 naming the parameter',
    async (path) => {
      for (const key of PROTOTYPE_KEYS) {
        const res = await api.request('GET', `${path}?${key}=x`, { token: admin });
        expect({ key, status: res.status }).toEqual({ key, status: 422 });
        expect(res.body.fields).toEqual({ [key]: ['unknown query parameter'] });
      }
    },
  );

  test.each([
    ['POST', '/orders'],
    ['POST', '/payments'],
    ['POST', '/api-keys'],
    ['POST', '/uploads/presign'],
  ])('%s %s with a prototype-named body key -> 4xx naming it', async (method, path) => {
    const poisoned = await api.request(method, path, {
      token: admin,
      raw: '{"__proto__": {"admin": true}}',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k-proto' },
    });
    expect(poisoned.status).toBe(400);
    expect(poisoned.body).toEqual({
      error: 'invalid_request',
      message: 'a "__proto__" key is not allowed',
    });
    for (const key of PROTOTYPE_KEYS.filter((k) => k !== '__proto__')) {
      const res = await api.request(method, path, {
        token: admin,
        raw: `{"${key}": 1}`,
        headers: { 'content-type': 'application/json', 'idempotency-key': `k-${key}` },
      });
      expect({ key, status: res.status }).toEqual({ key, status: 422 });
      expect(res.body.fields[key]).toEqual(['unknown or read-only field']);
    }
  });

  test('PATCH and PUT /orders/:id with a prototype-named body key -> 422', async () => {
    const order = await api.request('POST', '/orders', { token: admin, body: newOrderBody() });
    for (const method of ['PATCH', 'PUT']) {
      const res = await api.request(method, `/orders/${order.body.id}`, {
        token: admin,
        raw: `{"constructor": {"a": 1}, "toString": "x"}`,
        headers: { 'content-type': 'application/json', 'if-match': order.headers.get('etag')! },
      });
      expect(res.status).toBe(422);
      expect(Object.keys(res.body.fields)).toEqual(
        expect.arrayContaining(['constructor', 'toString']),
      );
    }
  });
});

describe('bodies that do not decode', () => {
  const json = JSON.stringify(newOrderBody());
  const gzipped = gzipSync(json);

  test('a gzip body is decoded', async () => {
    const res = await fetch(`${api.url}/orders`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${admin}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
      body: gzipped,
    });
    expect(res.status).toBe(201);
  });

  test.each([
    ['not gzip at all', Buffer.from(json), 'gzip'],
    ['truncated gzip', gzipped.subarray(0, gzipped.length - 8), 'gzip'],
    ['not deflate', Buffer.from(json), 'deflate'],
    ['not brotli', Buffer.from(json), 'br'],
  ])('Content-Encoding with a body that is %s -> 400', async (_name, body, encoding) => {
    const res = await fetch(`${api.url}/orders`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${admin}`,
        'content-type': 'application/json',
        'content-encoding': encoding,
      },
      body,
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'invalid_request',
      message: `the body is not valid ${encoding} content`,
    });
  });

  test('an unknown Content-Encoding -> 415', async () => {
    const res = await fetch(`${api.url}/orders`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${admin}`,
        'content-type': 'application/json',
        'content-encoding': 'zstd-or-whatever',
      },
      body: json,
    });
    expect(res.status).toBe(415);
    expect(((await res.json()) as { error: string }).error).toBe('unsupported_media_type');
  });
});

describe('NUL characters', () => {
  const NUL_REFUSED = {
    error: 'invalid_request',
    message: 'the request contains a NUL character',
  };

  test('POST /login with a NUL in the email (JSON and form) -> 400', async () => {
    const asJson = await api.request('POST', '/login', {
      body: { email: 'a\u0000b@example.test', password: 'whatever-password' },
    });
    expect(asJson.status).toBe(400);
    expect(asJson.body).toEqual(NUL_REFUSED);
    const asForm = await api.request('POST', '/login', {
      raw: 'email=a%00b%40example.test&password=whatever-password',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(asForm.status).toBe(400);
    expect(asForm.body).toEqual(NUL_REFUSED);
  });

  test('POST /orders with a NUL in the customer, a key or a nested value -> 400, nothing stored', async () => {
    const before = (await api.request('GET', '/orders?limit=100', { token: admin })).body;
    for (const body of [
      newOrderBody({ customer: 'ACME\u0000' }),
      { ...newOrderBody(), 'x\u0000': 1 },
      newOrderBody({ items: [{ sku: '\u0000', qty: 1 }] }),
    ]) {
      const res = await api.request('POST', '/orders', { token: admin, body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(NUL_REFUSED);
    }
    const after = (await api.request('GET', '/orders?limit=100', { token: admin })).body;
    expect(after.items.length).toBe(before.items.length);
  });

  test('a NUL in the query or the path -> 400', async () => {
    for (const path of [
      '/orders?status=%00',
      '/orders/a%00b',
      '/users?email=%00',
      '/events?type=%00',
    ]) {
      const res = await api.request('GET', path, { token: admin });
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.body).toEqual(NUL_REFUSED);
    }
  });
});

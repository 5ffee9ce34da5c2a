import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { DependencyUnavailableError } from '../../kernel/unavailable.js';
import { callDependency, ConsoleSessionRefused, createAdminApi } from './admin-api.js';

// What the console makes of the servers it calls (its own token endpoint, the admin API) when
// they fail: unavailable (a 503 page), never a 500 and never a refusal of the user.

let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    switch (req.url) {
      case '/not-json':
        res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>proxy error</h1>');
        return;
      case '/down':
        res
          .writeHead(503, { 'content-type': 'application/json' })
          .end('{"error":"temporarily_unavailable"}');
        return;
      case '/cut':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"access_');
        res.destroy();
        return;
      case '/refused':
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
        return;
      case '/expired':
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_token"}');
        return;
      default:
        res.writeHead(204).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

test.each(['/not-json', '/down', '/cut'])(
  'an answer at %s is the dependency being unavailable',
  async (path) => {
    await expect(callDependency('token endpoint', `${base}${path}`, {})).rejects.toThrow(
      DependencyUnavailableError,
    );
    await expect(callDependency('token endpoint', `${base}${path}`, {})).rejects.toMatchObject({
      status: 503,
    });
  },
);

test('nobody listening is the dependency being unavailable', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  await expect(callDependency('admin API', `http://127.0.0.1:${port}/`, {})).rejects.toThrow(
    'admin API unavailable',
  );
});

test('a 4xx is an answer: the caller reads it', async () => {
  expect(await callDependency('token endpoint', `${base}/refused`, {})).toEqual({
    status: 400,
    ok: false,
    body: { error: 'invalid_grant' },
  });
  expect(await callDependency('admin API', `${base}/empty`, {})).toEqual({
    status: 204,
    ok: true,
    body: undefined,
  });
});

test('the admin API: a refused token ends the session, an outage is a 503', async () => {
  const api = createAdminApi(() => base, 'token');
  await expect(api.get('/expired')).rejects.toThrow(ConsoleSessionRefused);
  await expect(api.get('/down')).rejects.toThrow(DependencyUnavailableError);
  await expect(api.send('POST', '/not-json', {})).rejects.toThrow(DependencyUnavailableError);
});

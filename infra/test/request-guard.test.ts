import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawnScript, waitFor, type Spawned } from './helpers/processes.js';

let proc: Spawned;
let url: string;

beforeAll(async () => {
  proc = await spawnScript('infra/test/fixtures/guarded-server.ts', {});
  const port = await waitFor(() => /listening (\d+)/.exec(proc.output())?.[1], 20_000);
  url = `http://127.0.0.1:${port}`;
}, 60_000);
afterAll(async () => {
  proc.child.kill('SIGKILL');
  await proc.exited;
});

test.each(['/emitter', '/timer', '/rejection'])(
  'an error escaping every handler (%s) fails its own request with 500 and the process serves on',
  async (path) => {
    const res = await fetch(`${url}${path}`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'internal_error' });
    expect(await (await fetch(`${url}/`)).text()).toBe('ok');
    expect(proc.child.exitCode).toBeNull();
    expect(proc.output()).toMatch(/its request failed; the process serves on/);
  },
);

test('a response already under way is cut, so the client sees it incomplete rather than whole', async () => {
  const res = await fetch(`${url}/half`);
  expect(res.status).toBe(200);
  await expect(res.text()).rejects.toThrow();
  expect(await (await fetch(`${url}/`)).text()).toBe('ok');
});

import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ESCAPED_ERROR_LIMIT, EX_SOFTWARE } from '@portcullis/observability';
import { spawnScript, waitFor, type Spawned } from './helpers/processes.js';

const dataDirs: string[] = [];
const running: Spawned[] = [];

/** The guarded server in a process of its own, on PostgreSQL with DATABASE_URL set, else embedded. */
async function startGuarded(): Promise<{ proc: Spawned; url: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'portcullis-guard-'));
  dataDirs.push(dataDir);
  const databaseUrl = process.env['DATABASE_URL'];
  const proc = await spawnScript('infra/test/fixtures/guarded-server.ts', {
    DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  running.push(proc);
  const url = await waitFor(() => /"guarded":"(http:[^"]+)"/.exec(proc.output())?.[1], 60_000);
  return { proc, url };
}

/** The JSON log lines the process wrote, in order. */
function logLines(proc: Spawned): { level: number; msg: string; [key: string]: unknown }[] {
  return proc
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string });
}

afterAll(async () => {
  for (const proc of running) {
    if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
    await proc.exited;
  }
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

describe('an escaped error', () => {
  let proc: Spawned;
  let url: string;
  beforeAll(async () => {
    ({ proc, url } = await startGuarded());
  }, 90_000);

  test.each(['/emitter', '/timer', '/rejection'])(
    'escaping every handler (%s) fails its own request with 500 and the process serves on',
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
});

describe('errors that keep escaping', () => {
  test(`${ESCAPED_ERROR_LIMIT} within the window: a clean shutdown, then exit ${EX_SOFTWARE}`, async () => {
    const { proc, url } = await startGuarded();
    for (let i = 1; i < ESCAPED_ERROR_LIMIT; i++)
      expect((await fetch(`${url}/timer`)).status).toBe(500);
    expect(await (await fetch(`${url}/`)).text()).toBe('ok');
    expect(proc.child.exitCode).toBeNull();

    expect((await fetch(`${url}/timer`)).status).toBe(500);
    expect(await proc.exited).toBe(EX_SOFTWARE);
    const lines = logLines(proc);
    const fatal = lines.filter((l) => l.level === 60);
    expect(fatal.map((l) => l.msg)).toEqual([
      `${ESCAPED_ERROR_LIMIT} errors escaped every handler within 60 s: shutting down so that a fresh process takes over`,
    ]);
    // After the fatal line, the ordinary shutdown: services, then the database, then exit.
    // (pino writes a fatal line at once, so the 10th error's own line may come after it.)
    const after = lines.slice(lines.indexOf(fatal[0]!) + 1).filter((l) => l.level !== 50);
    expect(after.map((l) => l.msg)).toEqual(['shutting down', 'database closed', 'stopped']);
    expect(lines.at(-1)).toMatchObject({ exitCode: EX_SOFTWARE });
  }, 90_000);
});

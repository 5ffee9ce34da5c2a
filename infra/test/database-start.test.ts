import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@portcullis/db/testing';
import { freePort } from '@portcullis/testing';
import { startTcpProxy, viaProxy, type TcpProxy } from '@portcullis/db/testing';
import { spawnScript, waitFor, type Spawned } from './helpers/processes.js';

/**
 * `npm start` (infra/scripts/start-all.ts, as a real process) when the database is not
 * what it expects: PostgreSQL down at start is waited for (DB_START_TIMEOUT) while
 * /healthz answers and /readyz fails; signing keys encrypted with another
 * KEY_ENCRYPTION_KEY end the process with 78 and a message saying what to do. Neither
 * prints a stack.
 */
const dirs: string[] = [];
const runs: Spawned[] = [];
afterAll(() => {
  for (const run of runs) if (run.child.exitCode === null) run.child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshDataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'portcullis-db-start-'));
  dirs.push(dir);
  return dir;
}

async function startAll(env: Record<string, string>): Promise<Spawned> {
  const run = await spawnScript('infra/scripts/start-all.ts', { ADMIN_PORT: '0', ...env });
  runs.push(run);
  return run;
}

const upLine = (run: Spawned) => () =>
  run
    .output()
    .split('\n')
    .find((l) => l.includes('Portcullis is up'));

const noStack = (output: string) => expect(output).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);

describe('npm start with the database unreachable', () => {
  it('gives up after DB_START_TIMEOUT with a message naming it, and no stack', async () => {
    const run = await startAll({
      DATA_DIR: freshDataDir(),
      DATABASE_URL: `postgres://postgres@127.0.0.1:${await freePort()}/nothing`,
      DB_START_TIMEOUT: '2',
      AUTH_PORT: '0',
      API_PORT: '0',
      WEB_PORT: '0',
    });
    expect(await run.exited).toBe(69);
    expect(run.output()).toContain('waiting for the database');
    expect(run.output()).toMatch(/unreachable \(ECONNREFUSED\) after DB_START_TIMEOUT \(2 s\)/);
    noStack(run.output());
  }, 60_000);
});

/** GET /healthz, retried while nothing listens on the port yet (10 s at most). */
async function healthzOnceListening(base: string): Promise<number> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      return (await fetch(`${base}/healthz`)).status;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

const withPostgres = process.env['DATABASE_URL'] ? describe : describe.skip;
if (!process.env['DATABASE_URL']) {
  console.info('database-start.test.ts: waiting for PostgreSQL is tested only with DATABASE_URL');
}

withPostgres('npm start before PostgreSQL is up (runs only with DATABASE_URL)', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  afterAll(async () => {
    await proxy?.close();
    await database?.close();
  });

  it('serves /healthz and a failing /readyz while it waits, and comes up when PostgreSQL does', async () => {
    database = await createTestDatabase({ migrate: false });
    const target = new URL(database.url!);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await proxy.cut();
    const [authPort, apiPort] = [await freePort(), await freePort()];
    const run = await startAll({
      DATA_DIR: freshDataDir(),
      DATABASE_URL: viaProxy(database.url!, proxy),
      AUTH_PORT: String(authPort),
      API_PORT: String(apiPort),
      WEB_PORT: '0',
    });
    await waitFor(
      () => (run.output().includes('waiting for the database') ? true : undefined),
      30_000,
    );
    expect(run.output()).toContain('"reason":"ECONNREFUSED"');
    for (const port of [authPort, apiPort]) {
      const base = `http://127.0.0.1:${port}`;
      // The servers start side by side: the other may log its first wait a moment later.
      expect(await healthzOnceListening(base)).toBe(200);
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(503);
      expect(ready.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      const other = await fetch(`${base}/orders`);
      expect(other.status).toBe(503);
      expect(await other.json()).toMatchObject({ error: 'temporarily_unavailable' });
    }

    await proxy.restore();
    await waitFor(upLine(run), 45_000);
    for (const port of [authPort, apiPort]) {
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    }
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    noStack(run.output());
  }, 90_000);
});

describe('npm start on a database whose signing keys another KEY_ENCRYPTION_KEY encrypted', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await database?.close();
  });

  it('exits with 78 and a message naming KEY_ENCRYPTION_KEY', async () => {
    const env: Record<string, string> = { AUTH_PORT: '0', API_PORT: '0', WEB_PORT: '0' };
    if (process.env['DATABASE_URL']) {
      database = await createTestDatabase({ migrate: false });
      env['DATABASE_URL'] = database.url!;
    }
    const dataDir = freshDataDir();
    const first = await startAll({ ...env, DATA_DIR: dataDir });
    await waitFor(upLine(first), 45_000);
    first.child.kill('SIGTERM');
    await first.exited; // how it stops is start.test.ts's and graceful-shutdown.test.ts's
    // As a fresh DATA_DIR would: the generated key is gone, the database still has keys.
    rmSync(path.join(dataDir, 'key-encryption-key'));

    const second = await startAll({ ...env, DATA_DIR: dataDir });
    expect(await second.exited).toBe(78);
    expect(second.output()).toMatch(/cannot be decrypted with this KEY_ENCRYPTION_KEY/);
    expect(second.output()).toContain('Set KEY_ENCRYPTION_KEY to the key that encrypted them');
    expect(second.output()).not.toContain('Unsupported state');
    noStack(second.output());
  }, 120_000);
});

import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing';

const CLI = path.resolve(import.meta.dirname, '../src/cli/admin.ts');
const TSX = path.resolve(import.meta.dirname, '../../../node_modules/.bin/tsx');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `pnpm admin …` as a user runs it: a process of its own, with only the given variables. */
function admin(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      TSX,
      [CLI, ...args],
      { env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

describe('pnpm admin', () => {
  test('finds the admin API by ADMIN_PORT', async () => {
    const port = new URL(t.server.adminUrl).port;
    const run = await admin(['signing-key:list', '--json'], {
      ADMIN_PORT: port,
      ADMIN_TOKEN: t.server.adminToken,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).items).toHaveLength(1);
  });

  test('an unreachable admin API: says which URL it tried and why, exits 69', async () => {
    const port = await closedPort();
    const run = await admin(['client:list'], { ADMIN_PORT: String(port), ADMIN_TOKEN: 'x' });
    expect(run.code).toBe(69);
    expect(run.stderr).toContain(`http://127.0.0.1:${port}/admin/clients`);
    expect(run.stderr).toContain('ECONNREFUSED');
    expect(run.stderr).toMatch(/ADMIN_PORT/);
    expect(run.stderr).not.toMatch(/^fetch failed$/m);
  });

  test('ADMIN_URL overrides ADMIN_PORT; an answer that is not the admin API is named', async () => {
    const run = await admin(['client:list'], {
      ADMIN_PORT: '1',
      ADMIN_URL: t.issuer,
      ADMIN_TOKEN: 'x',
    });
    expect(run.code).toBe(69);
    expect(run.stderr).toContain(`${t.issuer}/admin/clients`);
    expect(run.stderr).toMatch(/not the admin API/);
  });

  test('an invalid ADMIN_PORT is named, exit 78', async () => {
    const run = await admin(['client:list'], { ADMIN_PORT: 'eighty', ADMIN_TOKEN: 'x' });
    expect(run.code).toBe(78);
    expect(run.stderr).toContain('ADMIN_PORT');
  });
});

describe('pnpm admin user:factors / user:reset-factors', () => {
  test("lists a user's second factors and removes them", async () => {
    const created = await t.admin('POST', '/admin/users', {
      email: `cli-factors-${Date.now()}@example.com`,
      password: 'a long enough password',
      roles: ['viewer'],
    });
    const id = created.body['id'] as string;
    const env = { ADMIN_PORT: new URL(t.server.adminUrl).port, ADMIN_TOKEN: t.server.adminToken };
    const listed = await admin(['user:factors', id, '--json'], env);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({ items: [], recovery_codes_remaining: 0 });
    const reset = await admin(['user:reset-factors', id, '--json'], env);
    expect(reset.code).toBe(0);
    expect(JSON.parse(reset.stdout)).toMatchObject({ recovery_codes_removed: 0 });
    expect((await admin(['user:factors'], env)).code).toBe(64);
  });
});

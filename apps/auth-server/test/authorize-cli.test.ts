import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  apiScopeOf,
  browser,
  browserLogin,
  createUser,
  decodeJwt,
  until,
} from '@portcullis/testing';
import { compiledScript } from '../../../infra/test/helpers/processes.js';

// `npm run authorize` (README "Authorization Code + PKCE") as a reader runs it: its own
// process, a native client with a loopback redirect, the sign-in done by whatever BROWSER
// names (here a script that hands the URL to this test, which signs in with a cookie jar).

// Through tsx for a reader; compiled once here, as `pnpm build` compiles an entry.
const CLI = compiledScript('apps/auth-server/src/admin/cli/authorize/main.ts');

let t: TestAuthServer;
let dir: string;
let opener: string;
const CLIENT = 'cli-test';

beforeAll(async () => {
  t = await startTestAuthServer();
  await t.admin('POST', '/admin/clients', {
    client_id: CLIENT,
    application_type: 'native',
    token_endpoint_auth_method: 'none',
    redirect_uris: ['http://127.0.0.1/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
  });
  dir = await mkdtemp(path.join(tmpdir(), 'authorize-cli-'));
  opener = path.join(dir, 'open');
  await writeFile(opener, `#!/bin/sh\nprintf '%s' "$1" > "${dir}/url"\n`);
  await chmod(opener, 0o755);
});
afterAll(async () => {
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function authorize(args: string[], env: Record<string, string> = {}) {
  const cli = await CLI;
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args],
      {
        env: { PATH: process.env['PATH'] ?? '', ISSUER: t.issuer, BROWSER: opener, ...env },
        timeout: 30_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The command's listener: the test's issuer may be on 127.0.0.1 too, on another path. */
const atCallback = (url: URL) => url.hostname === '127.0.0.1' && url.pathname === '/callback';

/** The URL BROWSER was given, once it was. */
async function openedUrl(): Promise<string> {
  const file = path.join(dir, 'url');
  const url = await until(
    () => readFile(file, 'utf8').catch(() => ''),
    (v) => v !== '',
    20_000,
  );
  if (!url) throw new Error('BROWSER was not run');
  await rm(file);
  return url;
}

test('signs in through the browser, catches the code on 127.0.0.1 and prints the token response', async () => {
  const user = await createUser(t);
  const run = authorize(['--client', CLIENT, '--login-hint', user.email]);
  const url = new URL(await openedUrl());
  expect(url.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  const pages: string[] = [];
  const b = browser();
  const landed = await browserLogin(url.href, user, { b, stopAt: atCallback, pages });
  // The login page had the login_hint filled in.
  expect(pages[0]).toContain(`value="${user.email}"`);
  expect(await (await fetch(landed)).text()).toMatch(/Signed in/);
  const { code, stdout, stderr } = await run;
  expect(stderr).toContain(url.href);
  expect(code).toBe(0);
  const tokens = JSON.parse(stdout) as Record<string, string>;
  expect(tokens['refresh_token']).toBeTruthy();
  expect(decodeJwt(tokens['access_token']!).payload).toMatchObject({ client_id: CLIENT });
});

test('--field prints one field; a refused consent exits 1 naming the error', async () => {
  const user = await createUser(t);
  const field = authorize(['--client', CLIENT, '--field', 'scope']);
  await fetch(await browserLogin(await openedUrl(), user, { stopAt: atCallback }));
  // The granted scope, `api` spelled out into the editor's permissions.
  expect((await field).stdout).toBe(
    `openid profile email offline_access ${await apiScopeOf(t, ['editor'])}\n`,
  );

  const denied = authorize(['--client', CLIENT, '--prompt', 'consent']);
  const other = await createUser(t);
  await fetch(
    await browserLogin(await openedUrl(), other, { stopAt: atCallback, consent: 'deny' }),
  );
  const { code, stderr } = await denied;
  expect(code).toBe(1);
  expect(stderr).toMatch(/access_denied/);
});

test('--help exits 0; bad usage 64; an unreachable issuer 69', async () => {
  expect((await authorize(['--help'])).code).toBe(0);
  const bad = await authorize(['--acr', 'strong']);
  expect(bad.code).toBe(64);
  expect(bad.stderr).toMatch(/--acr must be mfa or pwd/);
  expect((await authorize(['--redirect-uri', 'http://localhost/cb'])).code).toBe(64);
  const down = await authorize([], { ISSUER: 'http://127.0.0.1:9' });
  expect(down.code).toBe(69);
  expect(down.stderr).toMatch(/cannot read http:\/\/127\.0\.0\.1:9\/ discovery/);
});

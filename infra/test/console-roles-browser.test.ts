/**
 * The console next to a running API (docs/console.md, docs/roles.md): a role the administrator
 * adds in the console lets a user's new token through an API route that refused it, with no
 * restart of either app; and the console's status page reports the API ready.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { RunningApiServer } from '@portcullis/api';
import { startApiBeside } from './helpers/api-beside.js';
import { type TestAuthServer } from '@portcullis/testing/auth-server';
import { createUser, discover, freePort, pkceSignIn, publicSpa, until } from '@portcullis/testing';
import {
  type Browser,
  browserSignInForFile,
  asConsoleAdmin,
  README_IMG,
  readmeScreenshot,
} from '@portcullis/testing/browser';
import { BUILT_IN_RESOURCE_ID } from '@portcullis/db';

let apiUrl: string;
let dataDir: string;
let t: TestAuthServer;
let browser: Browser;
let api: RunningApiServer | undefined;

beforeAll(async () => {
  apiUrl = `http://127.0.0.1:${await freePort()}`;
  dataDir = await mkdtemp(path.join(tmpdir(), 'portcullis-console-api-'));
});
// Closed before the auth server and its database.
afterAll(async () => {
  await api?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});
// API_AUDIENCE is where the console's status page finds the API.
browserSignInForFile(
  (stack) => ({ auth: t, browser } = stack),
  () => ({ API_AUDIENCE: apiUrl }),
);
beforeAll(async () => {
  api = await startApiBeside(t, apiUrl, dataDir);
}, 60_000);

/** A new access token of `user` for the API (each sign-in reads the user's roles afresh). */
async function newToken(user: { email: string; password: string }): Promise<string> {
  const config = await discover(t, (await publicSpa(t)).client_id);
  const tokens = await pkceSignIn(config, user, { scope: 'openid api', resource: apiUrl });
  return tokens.access_token;
}

async function statusOf(pathname: string, token: string): Promise<number> {
  const res = await fetch(`${apiUrl}${pathname}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await res.arrayBuffer();
  return res.status;
}

/** The API's answer to a new token each time, until it is `status` (about a second: the roles poll). */
const newTokenUntil = (user: { email: string; password: string }, status: number) =>
  until(
    async () => statusOf('/payments', await newToken(user)),
    (seen) => seen === status,
    20_000,
  );

/** The role form's checkbox of payments:read on this server's own API. */
const paymentsRead = `input[name="grant"][value="${BUILT_IN_RESOURCE_ID} payments:read"]`;

test('adds a role and sees an API route allow it', async () => {
  const user = await createUser(t, ['viewer']);
  // A viewer reads orders but not payments.
  const before = await newToken(user);
  expect(await statusOf('/orders', before)).toBe(200);
  expect(await statusOf('/payments', before)).toBe(403);

  const role = `payer-${Math.random().toString(36).slice(2, 8)}`;
  await asConsoleAdmin(t, browser, '/console/roles', async (page) => {
    await page.fill('input[name="name"]', role);
    await page.check(paymentsRead);
    await page.click('form:has(input[name="name"]) button[type="submit"]');
    await page.getByRole('status').filter({ hasText: 'Role created.' }).waitFor();
    // Given to the user on the user's page in the console.
    await page.goto(`${t.issuer}/console/users/${user.id}`);
    await page.check(`input[name="roles"][value="${role}"]`);
    await page.getByRole('button', { name: 'Save roles' }).click();
    await page.getByRole('status').filter({ hasText: 'The roles are saved.' }).waitFor();
    expect(await newTokenUntil(user, 200)).toBe(200);

    // The permission taken from the role in the console: refused again, without a restart.
    await page.goto(`${t.issuer}/console/roles/${role}`);
    await page.uncheck(paymentsRead);
    await page.getByRole('button', { name: 'Save permissions' }).click();
    await page.getByRole('status').filter({ hasText: 'Role saved.' }).waitFor();
    expect(await newTokenUntil(user, 403)).toBe(403);
  });
}, 120_000);

test('the status page reports the API ready, with its database', async () => {
  await asConsoleAdmin(t, browser, '/console/status', async (page) => {
    const section = page.locator('section[aria-labelledby="status-api"]');
    expect(await section.locator('[data-state]').getAttribute('data-state')).toBe('ready');
    expect(await section.locator('li[data-dependency="database"]').textContent()).toBe(
      'database: ok',
    );
    // The API's request counts, read from its /metrics.
    const counts = page.locator('section[aria-labelledby="status-requests"] tr[data-app="api"] td');
    expect(await counts.count()).toBe(3);
    expect(await counts.nth(1).textContent()).toMatch(/^\d+$/);
    await readmeScreenshot(page, new URL('console-status.png', README_IMG), { fullPage: true });
  });
}, 60_000);

import { expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  ageSignIn,
  apiScopeOf,
  browser as cookieBrowser,
  createClient,
  createUser,
  discover,
  enrolTotp,
  pkceSignIn,
  publicSpa,
} from '@portcullis/testing';
import {
  type Browser,
  browserSignInForFile,
  asConsoleAdmin,
  type Page,
  README_IMG,
  readmeScreenshot,
  submitPassword,
} from '@portcullis/testing/browser';

// The console's clients and users sections in real Chromium (docs/console.md): every change
// through the admin API, destructive ones only after a fresh sign-in.

let t: TestAuthServer;
let browser: Browser;
browserSignInForFile((stack) => ({ auth: t, browser } = stack));

/** A client-credentials call at the token endpoint with HTTP Basic; its status and body. */
async function clientCredentials(clientId: string, secret: string) {
  const res = await fetch(`${t.issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ grant_type: 'client_credentials' }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A signed-in console in a fresh browser context; closed by the test. */
const heading = (page: Page) => page.locator('h1').textContent();

test('an administrator creates a service client through the form and sees its secret once', async () => {
  const other = await createClient(t, {
    client_name: 'Unrelated web app',
    redirect_uris: ['https://a.example/cb'],
  });
  await asConsoleAdmin(t, browser, '/console/clients', async (page) => {
    await page.getByRole('link', { name: 'New client' }).click();
    await page.getByRole('heading', { name: 'New client' }).waitFor();
    await page.getByLabel('Service (client_credentials, with a secret)').check();
    await page.fill('#client_name', 'Nightly job');
    await page.fill('#scope', 'api');
    await page.getByRole('checkbox', { name: /^viewer/ }).check();
    await readmeScreenshot(page, new URL('console-client-new.png', README_IMG), { fullPage: true });
    // A refusal (a custom-scheme redirect URI is for native apps) keeps the form filled.
    await page.fill('#redirect_uris', 'myapp:/cb');
    await page.getByRole('button', { name: 'Create client' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.textContent('[role=alert]')).toContain('redirect_uris');
    expect(await page.inputValue('#client_name')).toBe('Nightly job');
    expect(await page.getByRole('checkbox', { name: /^viewer/ }).isChecked()).toBe(true);
    expect(await page.getByLabel('Service (client_credentials, with a secret)').isChecked()).toBe(
      true,
    );
    await page.fill('#redirect_uris', '');
    await page.getByRole('button', { name: 'Create client' }).click();

    await page.getByRole('heading', { name: 'Client created' }).waitFor();
    expect(await page.textContent('main')).toContain('it is not shown again');
    const secret = (await page.textContent('.secret'))!.trim();
    const clientId = (await page.textContent('main p code'))!.trim();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const call = await clientCredentials(clientId, secret);
    expect(call).toMatchObject({
      status: 200,
      body: { access_token: expect.any(String), scope: await apiScopeOf(t, ['viewer']) },
    });

    await page.getByRole('link', { name: 'Open the client' }).click();
    await page.waitForURL(`**/console/clients/${clientId}`);
    expect(await heading(page)).toBe('Nightly job');
    expect(await page.content()).not.toContain(secret);
    expect(await page.textContent('main')).toContain('Service (client_credentials, with a secret)');
    expect(
      await page.getByRole('link', { name: 'Audit trail of this client' }).getAttribute('href'),
    ).toBe(`/console/audit?client_id=${clientId}`);

    // A change through the edit form: the scope, as the admin API then lists it.
    await page.fill('#scope', 'api openid');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('The client is saved.').waitFor();
    expect(await page.inputValue('#scope')).toBe('api openid');

    // A client with its own keys has no secret to show, and none to rotate.
    await page.goto(`${t.issuer}/console/clients/new`);
    await page.getByLabel('Confidential with private_key_jwt (its own keys)').check();
    await page.fill('#client_name', 'Keyed app');
    await page.fill('#redirect_uris', 'https://keyed.example/cb');
    await page.fill('#jwks_uri', 'http://127.0.0.1:9/jwks.json');
    await page.getByRole('button', { name: 'Create client' }).click();
    await page.getByRole('heading', { name: 'Client created' }).waitFor();
    expect(await page.locator('.secret').count()).toBe(0);
    expect(await page.textContent('main')).toContain('This client has no secret');
    await page.getByRole('link', { name: 'Open the client' }).click();
    await page.getByRole('heading', { name: 'Keyed app' }).waitFor();
    expect(await page.getByRole('button', { name: 'Rotate the secret' }).count()).toBe(0);

    await page.goto(`${t.issuer}/console/clients?q=nightly`);
    const rows = await page.locator('tbody tr').allTextContents();
    expect(rows.some((r) => r.includes(clientId))).toBe(true);
    expect(rows.some((r) => r.includes(other.client_id))).toBe(false);
    await page.goto(`${t.issuer}/console/clients`);
    expect(await page.textContent('tbody')).toContain(other.client_id);
    expect(
      await page
        .getByRole('row', { name: /Nightly job/ })
        .getByRole('link', { name: 'Audit trail' })
        .getAttribute('href'),
    ).toBe(`/console/audit?client_id=${clientId}`);
    await readmeScreenshot(page, new URL('console-clients.png', README_IMG), { fullPage: true });
  });
}, 90_000);

test('an administrator creates a user, and disabling the user stops their tokens', async () => {
  await asConsoleAdmin(t, browser, '/console/users', async (page) => {
    const email = `ann-${Date.now().toString(36)}@example.com`;
    const password = 'long-password-for-ann';
    await page.getByRole('link', { name: 'New user' }).click();
    await page.fill('#email', email);
    await page.fill('#name', 'Ann Example');
    await page.fill('#password', password);
    await page.getByRole('checkbox', { name: /^viewer/ }).check();
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByText('The user is created.').waitFor();
    expect(await heading(page)).toBe(email);
    const userId = new URL(page.url()).pathname.split('/').pop()!;
    expect(
      await page.getByRole('link', { name: 'Audit trail of this user' }).getAttribute('href'),
    ).toBe(`/console/audit?subject=${userId}`);

    // Ann signs in to an app: a session, a grant and a refresh token.
    const config = await discover(t, (await publicSpa(t)).client_id);
    const tokens = await pkceSignIn(
      config,
      { email, password },
      { scope: 'openid offline_access api' },
    );
    const me = () =>
      fetch(`${t.issuer}/me`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect((await me()).status).toBe(200);

    await page.goto(`${t.issuer}/console/users?q=${encodeURIComponent('ann example')}`);
    expect(await page.locator('tbody tr').count()).toBe(1);
    await page.getByRole('link', { name: email }).click();
    await page.getByRole('heading', { name: 'Sessions (browsers)' }).waitFor();
    expect(await page.locator('table').nth(1).textContent()).toContain('pwd');
    expect(await page.textContent('main')).toContain(config.clientMetadata().client_id);
    await readmeScreenshot(page, new URL('console-users.png', README_IMG), { fullPage: true });

    await page.getByRole('button', { name: 'Disable the account' }).click();
    await page.getByText('The account is disabled and its sessions and tokens ended.').waitFor();
    expect(await page.textContent('main')).toContain('Disabled since');
    expect(await page.textContent('main')).toContain('No session.');
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    expect((await me()).status).toBe(401);

    await page.getByRole('button', { name: 'Enable the account' }).click();
    await page.getByText('The account is enabled.').waitFor();
    expect(await page.textContent('main')).toContain('Active');
  });
}, 90_000);

test('users are searched by name and paged with the admin API cursor', async () => {
  const tag = `pager${Date.now().toString(36)}`;
  for (let i = 0; i < 51; i += 17) {
    await Promise.all(
      Array.from({ length: Math.min(17, 51 - i) }, (_, j) =>
        t.admin('POST', '/admin/users', {
          email: `${tag}-${i + j}@example.com`,
          password: 'long-password-for-paging',
          name: `Pager ${tag}`,
        }),
      ),
    );
  }
  await asConsoleAdmin(t, browser, '/console/users', async (page) => {
    await page.getByRole('searchbox').fill(tag.toUpperCase());
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL((u) => u.searchParams.get('q') === tag.toUpperCase());
    expect(await page.locator('tbody tr').count()).toBe(50);
    await page.getByRole('link', { name: 'Next page' }).click();
    expect(new URL(page.url()).searchParams.get('after')).toBeTruthy();
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await page.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    expect(await page.inputValue('input[name=q]')).toBe(tag.toUpperCase());
  });
}, 90_000);

test("a user's page changes roles, revokes a grant, ends a session, removes the factors and forces a password reset", async () => {
  const user = await createUser(t, ['editor']);
  const config = await discover(t, (await publicSpa(t)).client_id);
  const tokens = await pkceSignIn(config, user, { scope: 'openid offline_access api' });
  await enrolTotp(t, cookieBrowser(), user);
  const factors = async () => (await t.admin('GET', `/admin/users/${user.id}/factors`)).body;
  await asConsoleAdmin(t, browser, `/console/users/${user.id}`, async (page) => {
    expect(await page.textContent('main')).toContain('Recovery codes left: 10');
    // A role given ends nothing (one taken away would sign the user out: docs/roles.md).
    await page.getByRole('checkbox', { name: /^viewer/ }).check();
    await page.getByRole('button', { name: 'Save roles' }).click();
    await page.getByText('The roles are saved.').waitFor();
    const users = await t.admin('GET', '/admin/users?limit=100');
    expect(users.body.items.find((u: { id: string }) => u.id === user.id).roles).toEqual([
      'editor',
      'viewer',
    ]);

    // The app's grant is revoked, and its refresh token with it.
    const spa = config.clientMetadata().client_id;
    const grant = page
      .getByRole('row')
      .filter({ hasText: spa })
      .filter({
        has: page.getByRole('button', { name: 'Revoke' }),
      });
    await grant.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('The grant is revoked.').waitFor();
    expect(await grant.count()).toBe(0);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });

    // Two sessions (the app's sign-in and the account page's): one ends.
    const sessions = page
      .getByRole('row')
      .filter({ has: page.getByRole('button', { name: 'End' }) });
    expect(await sessions.count()).toBe(2);
    await sessions.first().getByRole('button', { name: 'End' }).click();
    await page.getByText('The session is ended.').waitFor();
    expect(await sessions.count()).toBe(1);

    expect((await factors()).items).toHaveLength(1);
    await page.getByRole('button', { name: 'Remove all second factors' }).click();
    await page.getByText('The second factors are removed.').waitFor();
    expect(await page.textContent('main')).toContain('No second factor.');
    expect(await factors()).toMatchObject({ items: [], recovery_codes_remaining: 0 });

    await page.getByRole('button', { name: 'Force a password reset' }).click();
    await page
      .getByText('The password is reset and a link to choose a new one was mailed.')
      .waitFor();
    expect(await page.textContent('main')).toContain('No session.');
    await expect(pkceSignIn(config, user)).rejects.toThrow(/form POST/);
  });
}, 90_000);

test('rotating a secret and deleting a client need a fresh sign-in', async () => {
  const client = await createClient(t, {
    client_name: 'Reports',
    grant_types: ['client_credentials'],
  });
  const clientPath = `${t.issuer}/console/clients/${client.client_id}`;
  await asConsoleAdmin(t, browser, `/console/clients/${client.client_id}`, async (page, admin) => {
    // The sign-in an hour old: the console, signing in again silently, carries that auth_time.
    expect(await ageSignIn(t, admin.id, 3600)).toBeGreaterThan(0);
    await page.goto(
      `${t.issuer}/console/sign-in?return=${encodeURIComponent(`/console/clients/${client.client_id}`)}`,
    );
    await page.waitForURL(clientPath);

    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    expect(await page.locator('.secret').count()).toBe(0);
    expect((await clientCredentials(client.client_id, client.client_secret!)).status).toBe(200);

    await page.goto(`${clientPath}/delete`);
    await page.getByRole('button', { name: 'Yes, delete it' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
    const listed = await t.admin('GET', '/admin/clients');
    expect(listed.body.items.map((c: { client_id: string }) => c.client_id)).toContain(
      client.client_id,
    );

    await page.getByRole('link', { name: 'Sign in again' }).click();
    await submitPassword(page, admin);
    await page.fill('input[name="code"]', admin.nextCode());
    await page.click('form:has(input[name="code"]) button[type="submit"]');
    // Back on the page whose form asked for the fresh sign-in.
    await page.waitForURL(`${clientPath}/delete`);

    await page.goto(clientPath);
    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    await page.getByRole('heading', { name: 'New client secret' }).waitFor();
    const secret = (await page.textContent('.secret'))!.trim();
    expect((await clientCredentials(client.client_id, client.client_secret!)).status).toBe(401);
    expect((await clientCredentials(client.client_id, secret)).status).toBe(200);

    await page.goto(`${clientPath}/delete`);
    await page.getByRole('button', { name: 'Yes, delete it' }).click();
    await page.getByText('The client is deleted.').waitFor();
    expect(await page.textContent('main')).not.toContain(client.client_id);
    expect((await clientCredentials(client.client_id, secret)).status).toBe(401);
  });
}, 90_000);

import { expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { BUILT_IN_RESOURCE_ID, toJsonb } from '@portcullis/db';
import {
  type Browser,
  type Page,
  browserSignInForFile,
  asConsoleAdmin,
  consoleAdmin,
  README_IMG,
  readmeScreenshot,
  submitPassword,
} from '@portcullis/testing/browser';
import { type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  createUser,
  decodeJwt,
  discover,
  pkceSignIn,
  publicSpa,
  tokenRequest,
} from '@portcullis/testing';

// The console's roles, keys, audit and status sections in real Chromium (docs/console.md), and
// who the console turns away. No API runs next to this server: the status page says so.

let t: TestAuthServer;
let browser: Browser;
// No reuse interval: a second presentation of a refresh token is reuse at once.
browserSignInForFile(
  (stack) => ({ auth: t, browser } = stack),
  () => ({ REFRESH_REUSE_INTERVAL: '0' }),
);

const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;

/** A role form's checkbox of a permission of this server's own API. */
const builtInBox = (permission: string) =>
  `input[name="grant"][value="${BUILT_IN_RESOURCE_ID} ${permission}"]`;

test('roles: an administrator creates a role from the registered permissions; deleting one a user holds is refused', async () => {
  await asConsoleAdmin(t, browser, '/console/roles', async (page) => {
    const name = unique('auditor');
    await page.fill('input[name="name"]', name);
    await page.fill('input[name="description"]', 'Reads orders for the audit');
    // The built-in API's group offers its registered permissions only.
    const group = page.getByRole('group', { name: 'Portcullis API' });
    const offered = await group
      .locator('input[name="grant"]')
      .evaluateAll((boxes) => boxes.map((b) => b.getAttribute('value')!.split(' ')[1]));
    expect(offered).toEqual(
      ((await t.admin('GET', '/admin/permissions')).body as { items: string[] }).items,
    );
    await page.check(builtInBox('orders:read'));
    await page.click('form:has(input[name="name"]) button[type="submit"]');
    await page.getByRole('status').filter({ hasText: 'Role created.' }).waitFor();
    const link = page.getByRole('link', { name, exact: true });
    const row = page.getByRole('row').filter({ has: link });
    expect(await row.textContent()).toContain('orders:read');
    expect(await row.textContent()).toContain('Reads orders for the audit');
    expect((await t.admin('GET', `/admin/roles/${name}`)).body).toMatchObject({
      permissions: ['orders:read'],
    });

    // A second create of the same name does not replace it.
    await page.fill('input[name="name"]', name);
    await page.click('form:has(input[name="name"]) button[type="submit"]');
    await page
      .getByRole('alert')
      .filter({ hasText: `A role named ${name} exists already` })
      .waitFor();

    // Held by a user: the API refuses the deletion and the page says why.
    const holder = await createUser(t, [name]);
    await page.goto(`${t.issuer}/console/roles/${name}`);
    await page.getByRole('button', { name: `Delete ${name}` }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain(`${name} is held by 1 user(s) and 0 client(s)`);
    expect((await t.admin('GET', `/admin/roles/${name}`)).status).toBe(200);

    // Taken from the user, it goes.
    await t.admin('PATCH', `/admin/users/${holder.id}`, { roles: ['viewer'] });
    await page.goto(`${t.issuer}/console/roles/${name}`);
    await page.getByRole('button', { name: `Delete ${name}` }).click();
    await page.getByRole('status').filter({ hasText: 'Role deleted.' }).waitFor();
    expect(await page.getByRole('link', { name, exact: true }).count()).toBe(0);
    await readmeScreenshot(page, new URL('console-roles.png', README_IMG), { fullPage: true });
  });
}, 90_000);

test('roles: an edit replaces the permissions', async () => {
  const name = unique('support');
  await t.admin('PUT', `/admin/roles/${name}`, { permissions: ['users:read'] });
  await asConsoleAdmin(t, browser, `/console/roles/${name}`, async (page) => {
    await page.uncheck(builtInBox('users:read'));
    await page.check(builtInBox('events:read'));
    await page.getByRole('button', { name: 'Save permissions' }).click();
    await page.getByRole('status').filter({ hasText: 'Role saved.' }).waitFor();
    expect((await t.admin('GET', `/admin/roles/${name}`)).body).toMatchObject({
      permissions: ['events:read'],
    });
  });
}, 60_000);

test('keys: a key rotated in is next; retired, it is expired; the active key cannot be retired', async () => {
  await asConsoleAdmin(t, browser, '/console/keys', async (page) => {
    const before = await page.$$eval('tr[data-kid]', (rows) =>
      rows.map((r) => r.getAttribute('data-kid')),
    );
    expect(await page.textContent('main')).toContain('SIGNING_KEY_PUBLISH_LEAD');
    await page.selectOption('select[name="alg"]', 'ES256');
    await page.getByRole('button', { name: 'Rotate in' }).click();
    await page.getByRole('status').filter({ hasText: 'New key published' }).waitFor();
    const next = page.locator('tr[data-status="next"]');
    expect(await next.count()).toBe(1);
    const kid = (await next.getAttribute('data-kid'))!;
    expect(before).not.toContain(kid);
    expect(await next.textContent()).toContain('ES256');
    expect(await next.textContent()).toMatch(/signs in \d+ s/);
    await readmeScreenshot(page, new URL('console-keys.png', README_IMG), { fullPage: true });

    // Retiring the next key: no longer published.
    await next.getByRole('button', { name: 'Retire' }).click();
    await page.getByRole('status').filter({ hasText: 'Key retired' }).waitFor();
    expect(await page.locator(`tr[data-kid="${kid}"]`).getAttribute('data-status')).toBe('expired');
    const jwks = (await (await fetch(`${t.issuer}/.well-known/jwks.json`)).json()) as {
      keys: { kid: string }[];
    };
    expect(jwks.keys.map((k) => k.kid)).not.toContain(kid);

    // The active key signs: the API answers 409 and the page shows why.
    const active = page.locator('tr[data-status="active"]').first();
    const activeKid = await active.getAttribute('data-kid');
    await active.getByRole('button', { name: 'Retire' }).click();
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('rotate a new key in first');
    expect(await page.locator(`tr[data-kid="${activeKid}"]`).getAttribute('data-status')).toBe(
      'active',
    );
  });
}, 90_000);

const kindsShown = (page: Page) =>
  page.$$eval('tr[data-kind]', (rows) => rows.map((r) => r.getAttribute('data-kind')));

/** A refresh token presented twice: the reuse alarm (README "Refresh tokens"). */
async function refreshTokenReuse() {
  const user = await createUser(t);
  const client = await publicSpa(t);
  const config = await discover(t, client.client_id);
  const first = await pkceSignIn(config, user);
  await oidc.refreshTokenGrant(config, first.refresh_token!);
  const replay = await tokenRequest(t, {
    grant_type: 'refresh_token',
    client_id: client.client_id,
    refresh_token: first.refresh_token!,
  });
  expect(replay.body.error).toBe('invalid_grant');
  await t.server.settle();
  return { user, grantId: decodeJwt(first.access_token).payload.grant_id as string };
}

test('audit: the administrator’s changes name them; a kind filters; token reuse stands out', async () => {
  const reuse = await refreshTokenReuse();
  await asConsoleAdmin(t, browser, '/console/roles', async (page, admin) => {
    const name = unique('temp');
    await page.fill('input[name="name"]', name);
    await page.click('form:has(input[name="name"]) button[type="submit"]');
    await page.getByRole('status').filter({ hasText: 'Role created.' }).waitFor();

    await page.goto(`${t.issuer}/console/audit`);
    // The reuse row stands out, its user linked.
    const alarm = page.getByRole('row', { name: 'Alert: refresh_token_reuse' }).filter({
      hasText: reuse.grantId,
    });
    expect(await alarm.count()).toBe(1);
    expect(await alarm.getAttribute('class')).toContain('alert');
    expect(await alarm.textContent()).toContain('a stolen token may have been replayed');
    expect(await alarm.locator(`a[href="/console/users/${reuse.user.id}"]`).count()).toBe(1);
    // The top of the page: the filter and the newest entries.
    await readmeScreenshot(page, new URL('console-audit.png', README_IMG));

    // Filtered by kind: only that kind, and the filter stays chosen.
    await page.selectOption('select[name="kind"]', 'role_created');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL((u) => u.searchParams.get('kind') === 'role_created');
    const kinds = await kindsShown(page);
    expect(kinds.length).toBeGreaterThan(0);
    expect(new Set(kinds)).toEqual(new Set(['role_created']));
    expect(await page.inputValue('select[name="kind"]')).toBe('role_created');
    expect(await page.locator('tr[data-kind="role_created"]', { hasText: name }).count()).toBe(1);

    // The administrator's change names them, linked to their user page.
    const created = page.locator('tr[data-kind="role_created"]', { hasText: name });
    expect(await created.locator(`a[href="/console/users/${admin.id}"]`).count()).toBe(1);
    // By actor and a time window (datetime-local, read as UTC).
    const from = new Date(Date.now() - 10 * 60_000).toISOString().slice(0, 19);
    await page.goto(
      `${t.issuer}/console/audit?actor=${admin.id}&since=${encodeURIComponent(from)}`,
    );
    expect(await kindsShown(page)).toEqual(['role_created']);
  });
}, 90_000);

test('audit: older entries page by page, the filter kept', async () => {
  // More entries of one kind than a page holds (50), as failed sign-ins would leave them.
  const marker = unique('paging');
  await t.database.db('audit_events').insert(
    Array.from({ length: 60 }, (_, n) => ({
      kind: 'login_failed',
      detail: toJsonb({ marker, n }),
    })),
  );
  await asConsoleAdmin(t, browser, '/console/audit', async (page) => {
    await page.goto(`${t.issuer}/console/audit?kind=login_failed`);
    const shown = async () =>
      (await page.locator('tr[data-kind]', { hasText: marker }).allTextContents()).map((text) =>
        Number(/"n":(\d+)/.exec(text)![1]),
      );
    // Other failed sign-ins may come between: every page is of the kind, and together in order.
    const seen = [...(await shown())];
    expect(await page.locator('tr[data-kind]').count()).toBe(50);
    let pages = 1;
    while ((await page.getByRole('link', { name: 'Older' }).count()) > 0) {
      await page.getByRole('link', { name: 'Older' }).click();
      await page.waitForURL((u) => u.searchParams.has('before'));
      pages += 1;
      expect(new URL(page.url()).searchParams.get('kind')).toBe('login_failed');
      expect(new Set(await kindsShown(page))).toEqual(new Set(['login_failed']));
      seen.push(...(await shown()));
      if (seen.includes(0)) break;
    }
    expect(pages).toBeGreaterThan(1);
    expect(seen).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));
    expect(await page.getByRole('link', { name: 'Newest' }).getAttribute('href')).toBe(
      '/console/audit?kind=login_failed',
    );
  });
}, 60_000);

test('status: this server ready with its database; the API unreachable; the signing keys', async () => {
  await asConsoleAdmin(t, browser, '/console/status', async (page) => {
    const auth = page.locator('section[aria-labelledby="status-auth"]');
    expect(await auth.locator('[data-state]').getAttribute('data-state')).toBe('ready');
    expect(await auth.locator('li[data-dependency="database"]').textContent()).toBe('database: ok');
    const api = page.locator('section[aria-labelledby="status-api"]');
    expect(await api.locator('[data-state]').getAttribute('data-state')).toBe('unreachable');
    expect(await api.textContent()).toContain('Unreachable');
    const keys = page.locator('section[aria-labelledby="status-keys"] tr[data-status="active"]');
    expect(await keys.count()).toBeGreaterThan(0);
    expect(await keys.first().textContent()).toMatch(/in use, \d+/);
    const requests = page.locator('section[aria-labelledby="status-requests"]');
    expect(await requests.textContent()).toContain('In the last 15 minutes');
    expect(await requests.locator('tr[data-app="auth"] td').count()).toBe(3);
  });
}, 60_000);

test('a signed-in user without the admin role is refused with 403 and no console', async () => {
  const user = await consoleAdmin(t);
  await t.admin('PATCH', `/admin/users/${user.id}`, { roles: ['viewer'] });
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${t.issuer}/console/status`);
    await submitPassword(page, user);
    await page.fill('input[name="code"]', user.nextCode());
    const callback = page.waitForResponse((r) => new URL(r.url()).pathname === '/console/callback');
    await page.click('form:has(input[name="code"]) button[type="submit"]');
    expect((await callback).status()).toBe(403);
    expect(await page.getByRole('alert').textContent()).toBe(
      'Only administrators may use the console.',
    );
    expect(await page.locator('header nav').count()).toBe(0);
    // Nothing was kept: another console page signs them in again, and is refused again.
    const again = await page.goto(`${t.issuer}/console/roles`);
    expect(again!.status()).toBe(403);
    expect(await page.locator('header nav').count()).toBe(0);
    expect((await context.cookies()).map((c) => c.name)).not.toContain('portcullis_console');
  } finally {
    await context.close();
  }
}, 60_000);

test('an administrator without a second factor is asked for one and never reaches the console', async () => {
  const admin = await createUser(t, ['admin']);
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(`${t.issuer}/console/status`);
    await submitPassword(page, admin);
    await page
      .getByText('requires a second sign-in factor, and your account has none yet')
      .waitFor();
    expect(new URL(page.url()).pathname).toMatch(/^\/interaction\//);
    expect(await page.locator('header nav').count()).toBe(0);
    expect((await context.cookies()).map((c) => c.name)).not.toContain('portcullis_console');
  } finally {
    await context.close();
  }
}, 60_000);

test('a forged console form is refused with 403 and changes nothing', async () => {
  await asConsoleAdmin(t, browser, '/console/roles', async (page) => {
    const name = unique('forged');
    for (const csrf of [undefined, 'not-the-token']) {
      const answer = await page.request.post(`${t.issuer}/console/roles`, {
        form: {
          name,
          grant: `${BUILT_IN_RESOURCE_ID} users:*`,
          shown: BUILT_IN_RESOURCE_ID,
          ...(csrf ? { csrf } : {}),
        },
        maxRedirects: 0,
      });
      expect(answer.status()).toBe(403);
      expect(await answer.text()).toContain('did not come from the console');
    }
    // A form on another origin, posted from the signed-in browser.
    await page.route('http://elsewhere.test/', (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<form method="post" action="${t.issuer}/console/roles/admin/delete"><input name="csrf" value="x"><button>go</button></form>`,
      }),
    );
    await page.goto('http://elsewhere.test/');
    const refused = page.waitForResponse((r) => r.url().endsWith('/console/roles/admin/delete'));
    await page.click('button');
    expect([401, 403]).toContain((await refused).status());
    expect((await t.admin('GET', `/admin/roles/${name}`)).status).toBe(404);
    expect((await t.admin('GET', '/admin/roles/admin')).status).toBe(200);
  });
}, 60_000);

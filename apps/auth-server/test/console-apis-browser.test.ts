import { expect, test } from '@jest/globals';
import { BUILT_IN_RESOURCE_ID } from '@portcullis/db';
import {
  type Browser,
  type Page,
  browserSignInForFile,
  asConsoleAdmin,
} from '@portcullis/testing/browser';
import { type TestAuthServer } from '@portcullis/testing/auth-server';
import type { ResourceView } from '../src/admin/api/resource-routes.js';

// The console's APIs page and the role editor grouped by API, in real Chromium (docs/console.md).

let t: TestAuthServer;
let browser: Browser;
browserSignInForFile((stack) => ({ auth: t, browser } = stack));

const unique = (prefix: string) => `${prefix}-${Math.random().toString(36).slice(2, 8)}`;

async function resourceNamed(name: string): Promise<ResourceView | undefined> {
  const list = await t.admin('GET', '/admin/resources');
  return (list.body.items as ResourceView[]).find((r) => r.name === name);
}

/** Fills and sends the APIs page's create form. */
async function registerApi(
  page: Page,
  api: { identifier: string; name: string; permissions?: string },
): Promise<void> {
  await page.fill('#api-identifier', api.identifier);
  await page.fill('#api-name', api.name);
  await page.fill('#api-permissions', api.permissions ?? '');
  await page.getByRole('button', { name: 'Register the API' }).click();
}

test('an API registered in the console is granted by a role made in the console, one permission of two', async () => {
  await asConsoleAdmin(t, browser, '/console/apis', async (page) => {
    await registerApi(page, {
      identifier: 'https://invoices.example',
      name: 'Invoices',
      permissions: 'invoices:read Read invoices\ninvoices:write   Create and change invoices\n',
    });
    await page.getByRole('status').filter({ hasText: 'API registered.' }).waitFor();
    expect(await page.locator('h1').textContent()).toBe('API Invoices');
    const invoices = (await resourceNamed('Invoices'))!;
    expect(invoices).toMatchObject({
      identifier: 'https://invoices.example',
      permissions: [
        { name: 'invoices:read', description: 'Read invoices' },
        { name: 'invoices:write', description: 'Create and change invoices' },
      ],
      accessTokenTtl: null,
      signingAlg: null,
      dpopRequired: false,
      followsDenyList: false,
    });
    // Listed with its permissions' count; the built-in API is marked.
    await page.getByRole('link', { name: 'All APIs' }).click();
    const row = page.getByRole('row').filter({ hasText: 'https://invoices.example' });
    expect(await row.locator('td').allTextContents()).toEqual([
      'Invoices',
      'https://invoices.example',
      '2',
    ]);
    const builtIn = page.getByRole('row').filter({ hasText: 'Portcullis API' });
    expect(await builtIn.textContent()).toContain('built-in');

    // The role editor offers it as a group of its own, each permission with its description.
    await page.goto(`${t.issuer}/console/roles`);
    const name = unique('invoice-reader');
    await page.fill('input[name="name"]', name);
    const group = page.getByRole('group', { name: 'Invoices' });
    expect(await group.locator('label').allTextContents()).toEqual([
      ' invoices:read Read invoices',
      ' invoices:write Create and change invoices',
    ]);
    await group.getByRole('checkbox', { name: 'invoices:read' }).check();
    await page.click('form:has(input[name="name"]) button[type="submit"]');
    await page.getByRole('status').filter({ hasText: 'Role created.' }).waitFor();
    const listed = page.getByRole('row').filter({ has: page.getByRole('link', { name }) });
    expect(await listed.textContent()).toContain('Invoices: invoices:read');

    const role = await t.admin('GET', `/admin/roles/${name}`);
    expect(role.body).toMatchObject({
      permissions: [],
      grants: [
        {
          resource: 'https://invoices.example',
          resourceId: invoices.id,
          permissions: ['invoices:read'],
        },
      ],
    });

    // The role's page shows it ticked; adding one of the built-in API keeps both.
    await page.goto(`${t.issuer}/console/roles/${name}`);
    expect(await group.getByRole('checkbox', { name: 'invoices:read' }).isChecked()).toBe(true);
    expect(await group.getByRole('checkbox', { name: 'invoices:write' }).isChecked()).toBe(false);
    await page.check(`input[name="grant"][value="${BUILT_IN_RESOURCE_ID} orders:read"]`);
    await page.getByRole('button', { name: 'Save permissions' }).click();
    await page.getByRole('status').filter({ hasText: 'Role saved.' }).waitFor();
    expect((await t.admin('GET', `/admin/roles/${name}`)).body).toMatchObject({
      permissions: ['orders:read'],
      grants: expect.arrayContaining([
        expect.objectContaining({ resourceId: invoices.id, permissions: ['invoices:read'] }),
        expect.objectContaining({ resourceId: BUILT_IN_RESOURCE_ID, permissions: ['orders:read'] }),
      ]),
    });
  });
}, 90_000);

test("the create form shows the admin API's refusals, kept filled", async () => {
  await asConsoleAdmin(t, browser, '/console/apis', async (page) => {
    const identifier = `https://${unique('reports')}.example`;
    // A permission name the API does not take: 422, naming the field.
    await registerApi(page, { identifier, name: 'Reports', permissions: 'Reports:Read Read' });
    const refusal = page.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('permissions');
    expect(await page.inputValue('#api-identifier')).toBe(identifier);
    expect(await page.inputValue('#api-permissions')).toBe('Reports:Read Read');
    expect(await resourceNamed('Reports')).toBeUndefined();

    // Not an https URL: the identifier is named.
    await registerApi(page, { identifier: 'invoices', name: 'Reports' });
    await page.getByRole('alert').filter({ hasText: 'identifier' }).waitFor();

    // Registered already: 409.
    await registerApi(page, { identifier, name: 'Reports', permissions: 'reports:read' });
    await page.getByRole('status').filter({ hasText: 'API registered.' }).waitFor();
    await page.goto(`${t.issuer}/console/apis`);
    await registerApi(page, { identifier, name: 'Reports again' });
    await page.getByRole('alert').filter({ hasText: 'registered already' }).waitFor();

    // The built-in API's identifier (API_AUDIENCE) is taken too.
    const builtIn = (await t.admin('GET', `/admin/resources/${BUILT_IN_RESOURCE_ID}`)).body;
    await registerApi(page, { identifier: builtIn.identifier as string, name: 'Mine' });
    await page.getByRole('alert').filter({ hasText: 'API_AUDIENCE' }).waitFor();
  });
}, 90_000);

test("an API's page changes its settings and permissions, and deletes it", async () => {
  const identifier = `https://${unique('ledger')}.example`;
  const created = await t.admin('POST', '/admin/resources', {
    identifier,
    name: 'Ledger',
    permissions: [{ name: 'ledger:read' }, { name: 'ledger:close', description: 'Close a year' }],
  });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const role = unique('bookkeeper');
  await t.admin('PUT', `/admin/roles/${role}`, {
    grants: [{ resource: identifier, permissions: ['ledger:read', 'ledger:close'] }],
  });

  await asConsoleAdmin(t, browser, `/console/apis/${id}`, async (page) => {
    // Settings: a refusal keeps what was typed; then saved.
    await page.fill('#api-ttl', '30');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('alert').filter({ hasText: 'accessTokenTtl' }).waitFor();
    expect(await page.inputValue('#api-ttl')).toBe('30');
    await page.fill('#api-name', 'General ledger');
    await page.fill('#api-ttl', '600');
    await page.selectOption('#api-alg', 'ES256');
    await page.check('input[name="dpopRequired"]');
    await page.check('input[name="followsDenyList"]');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
    expect((await t.admin('GET', `/admin/resources/${id}`)).body).toMatchObject({
      identifier,
      name: 'General ledger',
      accessTokenTtl: 600,
      signingAlg: 'ES256',
      dpopRequired: true,
      followsDenyList: true,
    });
    expect(await page.inputValue('#api-ttl')).toBe('600');
    // Back to the server's defaults.
    await page.fill('#api-ttl', '');
    await page.selectOption('#api-alg', '');
    await page.uncheck('input[name="dpopRequired"]');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
    expect((await t.admin('GET', `/admin/resources/${id}`)).body).toMatchObject({
      accessTokenTtl: null,
      signingAlg: null,
      dpopRequired: false,
    });

    // Who grants what, linked to the roles.
    const closeRow = page.getByRole('row').filter({ hasText: 'ledger:close' });
    expect(await closeRow.getByRole('link', { name: role }).count()).toBe(1);

    // Add one (a bad name is refused and kept), describe one, remove one.
    const add = page.locator('form:has(input[name="add"])');
    await add.locator('input[name="name"]').fill('Ledger:Export');
    await add.getByRole('button', { name: 'Add permission' }).click();
    await page.getByRole('alert').filter({ hasText: 'resource' }).waitFor();
    expect(await add.locator('input[name="name"]').inputValue()).toBe('Ledger:Export');
    await add.locator('input[name="name"]').fill('ledger:export');
    await add.locator('input[name="description"]').fill('Export the books');
    await add.getByRole('button', { name: 'Add permission' }).click();
    await page.getByRole('status').filter({ hasText: 'Permission saved.' }).waitFor();
    await page.getByLabel('Description of ledger:read').fill('Read the books');
    await page
      .getByRole('row')
      .filter({ hasText: 'ledger:read' })
      .getByRole('button', { name: 'Save' })
      .click();
    await page.getByRole('status').filter({ hasText: 'Permission saved.' }).waitFor();
    await page.getByRole('button', { name: 'Remove ledger:close' }).click();
    await page.getByRole('status').filter({ hasText: 'Permission removed.' }).waitFor();
    expect((await t.admin('GET', `/admin/resources/${id}`)).body.permissions).toEqual([
      { name: 'ledger:export', description: 'Export the books' },
      { name: 'ledger:read', description: 'Read the books' },
    ]);
    // The role lost it with the permission.
    expect((await t.admin('GET', `/admin/roles/${role}`)).body.grants).toEqual([
      { resource: identifier, resourceId: id, permissions: ['ledger:read'] },
    ]);

    // Deleted: gone from the list, and from the role.
    await page.getByRole('button', { name: 'Delete General ledger' }).click();
    await page.getByRole('status').filter({ hasText: 'API deleted.' }).waitFor();
    expect(await page.getByRole('link', { name: 'General ledger' }).count()).toBe(0);
    expect((await t.admin('GET', `/admin/resources/${id}`)).status).toBe(404);
    expect((await t.admin('GET', `/admin/roles/${role}`)).body.grants).toEqual([]);
    const gone = await page.goto(`${t.issuer}/console/apis/${id}`);
    expect(gone?.status()).toBe(404);
  });
}, 90_000);

test('the built-in API keeps its identifier and cannot be deleted; its settings change', async () => {
  await asConsoleAdmin(t, browser, `/console/apis/${BUILT_IN_RESOURCE_ID}`, async (page) => {
    expect(await page.locator('h1').textContent()).toBe('API Portcullis API');
    expect(await page.locator('input[name="identifier"]').count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Delete/ }).count()).toBe(0);
    expect(await page.textContent('main')).toContain('cannot be deleted');
    await page.fill('#api-ttl', '300');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Settings saved.' }).waitFor();
    expect(
      (await t.admin('GET', `/admin/resources/${BUILT_IN_RESOURCE_ID}`)).body.accessTokenTtl,
    ).toBe(300);
    await t.admin('PATCH', `/admin/resources/${BUILT_IN_RESOURCE_ID}`, { accessTokenTtl: null });
  });
}, 60_000);

test("a role's save names a permission removed since the form was shown, and keeps the ticks", async () => {
  const identifier = `https://${unique('payroll')}.example`;
  const created = await t.admin('POST', '/admin/resources', {
    identifier,
    name: 'Payroll',
    permissions: [{ name: 'payroll:read' }, { name: 'payroll:run' }],
  });
  const id = created.body.id as string;
  await asConsoleAdmin(t, browser, '/console/roles', async (page) => {
    const name = unique('payroll');
    await page.fill('input[name="name"]', name);
    const group = page.getByRole('group', { name: 'Payroll' });
    await group.getByRole('checkbox', { name: 'payroll:read' }).check();
    await group.getByRole('checkbox', { name: 'payroll:run' }).check();
    expect((await t.admin('DELETE', `/admin/resources/${id}/permissions/payroll:run`)).status).toBe(
      204,
    );
    await page.click('form:has(input[name="name"]) button[type="submit"]');
    await page.getByRole('alert').filter({ hasText: 'unknown permission payroll:run' }).waitFor();
    expect(await page.inputValue('input[name="name"]')).toBe(name);
    expect(await group.getByRole('checkbox', { name: 'payroll:read' }).isChecked()).toBe(true);
    expect((await t.admin('GET', `/admin/roles/${name}`)).status).toBe(404);
  });
}, 60_000);

/**
 * Resource servers as data through the admin API (docs/roles.md): registering an API, its
 * settings and permissions, every refusal named, every change audited with its administrator;
 * a permission or a resource removed is removed from the roles that granted it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { BUILT_IN_RESOURCE_ID } from '@portcullis/db';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

/** An identifier no other test uses. */
const fresh = (prefix = 'api') => `https://${prefix}-${randomUUID().slice(0, 8)}.example.com`;

/** The audit rows of `kind` about the resource `identifier`, newest first. */
async function auditOf(kind: string, identifier: string) {
  const res = await t.admin('GET', `/admin/audit?kind=${kind}&limit=100`);
  return (res.body.items as { detail: Record<string, unknown>; actor: string }[]).filter(
    (e) => e.detail['resource'] === identifier,
  );
}

async function create(body: Record<string, unknown>) {
  const res = await t.admin('POST', '/admin/resources', body);
  expect(res.status).toBe(201);
  return res.body as { id: string; identifier: string } & Record<string, unknown>;
}

describe('admin: resources', () => {
  test('the built-in resource is this server’s API, by API_AUDIENCE, with its permissions', async () => {
    const listed = await t.admin('GET', '/admin/resources');
    expect(listed.status).toBe(200);
    const builtIn = (listed.body.items as { builtIn: boolean }[]).filter((r) => r.builtIn);
    expect(builtIn).toEqual([
      {
        id: BUILT_IN_RESOURCE_ID,
        identifier: t.apiAudience,
        name: 'Portcullis API',
        accessTokenTtl: null,
        signingAlg: null,
        dpopRequired: false,
        followsDenyList: true,
        builtIn: true,
        permissions: expect.arrayContaining([
          { name: 'orders:read', description: 'See orders' },
          { name: 'api-keys:*', description: 'Everything on API keys' },
        ]),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    ]);
    const shown = await t.admin('GET', `/admin/resources/${BUILT_IN_RESOURCE_ID}`);
    expect(shown.body).toEqual(builtIn[0]);
  });

  test('create, show, list, update, delete: each audited with its administrator', async () => {
    const identifier = fresh('invoices');
    const created = await t.admin('POST', '/admin/resources', {
      identifier,
      name: 'Invoices',
      permissions: [
        { name: 'invoices:read', description: 'Read invoices' },
        { name: 'invoices:write' },
      ],
      accessTokenTtl: 600,
      signingAlg: 'ES256',
      dpopRequired: true,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    expect(created.res.headers.get('location')).toBe(`/admin/resources/${id}`);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      identifier,
      name: 'Invoices',
      accessTokenTtl: 600,
      signingAlg: 'ES256',
      dpopRequired: true,
      followsDenyList: false,
      builtIn: false,
      permissions: [
        { name: 'invoices:read', description: 'Read invoices' },
        { name: 'invoices:write', description: '' },
      ],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await t.admin('GET', `/admin/resources/${id}`)).body).toEqual(created.body);
    const listed = await t.admin('GET', '/admin/resources');
    expect(listed.body.items).toContainEqual(created.body);

    const renamed = fresh('billing');
    const patched = await t.admin('PATCH', `/admin/resources/${id}`, {
      name: 'Billing',
      identifier: renamed,
      accessTokenTtl: null,
      followsDenyList: true,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      identifier: renamed,
      name: 'Billing',
      accessTokenTtl: null,
      signingAlg: 'ES256',
      dpopRequired: true,
      followsDenyList: true,
    });
    const reset = await t.admin('PATCH', `/admin/resources/${id}`, {
      signingAlg: null,
      dpopRequired: false,
    });
    expect(reset.body).toMatchObject({ signingAlg: null, dpopRequired: false });

    expect((await t.admin('DELETE', `/admin/resources/${id}`)).status).toBe(204);
    expect((await t.admin('GET', `/admin/resources/${id}`)).status).toBe(404);
    expect((await t.admin('DELETE', `/admin/resources/${id}`)).status).toBe(404);

    expect(await auditOf('resource_created', identifier)).toEqual([
      expect.objectContaining({
        actor: 'admin-token',
        detail: { resource: identifier, permissions: ['invoices:read', 'invoices:write'] },
      }),
    ]);
    expect(await auditOf('resource_updated', renamed)).toEqual([
      expect.objectContaining({
        actor: 'admin-token',
        detail: {
          resource: renamed,
          from: { signingAlg: 'ES256', dpopRequired: true },
          to: { signingAlg: null, dpopRequired: false },
        },
      }),
      expect.objectContaining({
        detail: {
          resource: renamed,
          from: { identifier, name: 'Invoices', accessTokenTtl: 600, followsDenyList: false },
          to: { identifier: renamed, name: 'Billing', accessTokenTtl: null, followsDenyList: true },
        },
      }),
    ]);
    expect(await auditOf('resource_deleted', renamed)).toEqual([
      expect.objectContaining({ actor: 'admin-token', detail: { resource: renamed, roles: [] } }),
    ]);
  });

  test('an identifier must be an absolute https URL (http for loopback and .test), without a fragment', async () => {
    const bad = [
      'api.example.com',
      '/api',
      'urn:example:api',
      'ftp://api.example.com',
      'http://api.example.com',
      'http://localhost.example.com',
      'https:api.example.com',
      'https://api.example.com/#top',
      'https://api.example.com/#',
      'https://api.example.com/ x',
      ' https://api.example.com',
      'https:\\\\api.example.com',
      `https://api.example.com/${'a'.repeat(2000)}`,
      '',
    ];
    for (const identifier of bad) {
      const res = await t.admin('POST', '/admin/resources', { identifier, name: 'X' });
      expect([identifier, res.status, res.body.error, Object.keys(res.body.fields)]).toEqual([
        identifier,
        422,
        'validation_failed',
        ['identifier'],
      ]);
    }
    const good = [
      'http://localhost:9000/api',
      'http://127.0.0.1:8080',
      'http://[::1]:8080/v1',
      `http://${randomUUID().slice(0, 8)}.portcullis.test`,
      `${fresh()}/v2?tenant=a`,
    ];
    for (const identifier of good) {
      const res = await t.admin('POST', '/admin/resources', { identifier, name: 'X' });
      expect([identifier, res.status]).toEqual([identifier, 201]);
      expect(res.body.identifier).toBe(identifier);
      await t.admin('DELETE', `/admin/resources/${res.body.id}`);
    }
  });

  test('refusals: a taken identifier or API_AUDIENCE (409), bad fields named (422), unknown (404)', async () => {
    const taken = await create({ identifier: fresh(), name: 'Taken' });
    const again = await t.admin('POST', '/admin/resources', {
      identifier: taken.identifier,
      name: 'Again',
    });
    expect(again).toMatchObject({ status: 409, body: { error: 'conflict' } });
    const audience = await t.admin('POST', '/admin/resources', {
      identifier: t.apiAudience,
      name: 'Mine',
    });
    expect(audience).toMatchObject({ status: 409, body: { error: 'conflict' } });
    expect(audience.body.message).toMatch(/API_AUDIENCE/);

    const other = await create({ identifier: fresh(), name: 'Other' });
    for (const identifier of [taken.identifier, t.apiAudience]) {
      const moved = await t.admin('PATCH', `/admin/resources/${other.id}`, { identifier });
      expect(moved).toMatchObject({ status: 409, body: { error: 'conflict' } });
    }

    const fields = async (body: Record<string, unknown>, method = 'POST', path = '') => {
      const res = await t.admin(method, `/admin/resources${path}`, body);
      expect([body, res.status, res.body.error]).toEqual([body, 422, 'validation_failed']);
      return res.body.fields as Record<string, string[]>;
    };
    const base = { identifier: fresh(), name: 'X' };
    for (const name of [
      'Orders:read',
      'orders',
      'orders:',
      ':read',
      'orders:read:all',
      'o rders:read',
    ]) {
      expect(await fields({ ...base, permissions: [{ name }] })).toEqual({
        permissions: [expect.stringMatching(/<resource>:<action>/)],
      });
    }
    expect(
      await fields({ ...base, permissions: [{ name: 'a:read' }, { name: 'a:read' }] }),
    ).toEqual({ permissions: ['a:read given twice'] });
    expect(
      await fields({ ...base, permissions: [{ name: 'a:read', description: 'd'.repeat(201) }] }),
    ).toHaveProperty('permissions');
    expect(await fields({ ...base, name: '' })).toHaveProperty('name');
    expect(await fields({ ...base, name: '   ' })).toHaveProperty('name');
    expect(await fields({ ...base, name: 'n'.repeat(101) })).toHaveProperty('name');
    expect(await fields({ identifier: fresh() })).toHaveProperty('name');
    for (const accessTokenTtl of [59, 3601, 600.5, '600', true]) {
      expect(await fields({ ...base, accessTokenTtl })).toEqual({
        accessTokenTtl: [expect.any(String)],
      });
    }
    for (const signingAlg of ['HS256', 'none', 'es256', 1]) {
      expect(await fields({ ...base, signingAlg })).toEqual({ signingAlg: [expect.any(String)] });
    }
    expect(await fields({ ...base, dpopRequired: 'true' })).toEqual({
      dpopRequired: [expect.any(String)],
    });
    expect(await fields({ ...base, followsDenyList: 1 })).toEqual({
      followsDenyList: [expect.any(String)],
    });
    expect(await fields({ ...base, builtIn: true })).toEqual({
      builtIn: ['unknown or read-only field'],
    });
    const path = `/${other.id}`;
    expect(await fields({}, 'PATCH', path)).toBeDefined();
    expect(await fields({ permissions: [] }, 'PATCH', path)).toMatchObject({
      permissions: ['unknown or read-only field'],
    });
    expect(await fields({ identifier: 'http://api.example.com' }, 'PATCH', path)).toHaveProperty(
      'identifier',
    );
    // The built-in resource's identifier is the configuration's; its other settings change.
    expect(await fields({ identifier: fresh() }, 'PATCH', `/${BUILT_IN_RESOURCE_ID}`)).toEqual({
      identifier: [expect.stringMatching(/API_AUDIENCE/)],
    });
    const builtInDelete = await t.admin('DELETE', `/admin/resources/${BUILT_IN_RESOURCE_ID}`);
    expect(builtInDelete).toMatchObject({ status: 409, body: { error: 'conflict' } });

    for (const id of [randomUUID(), 'nope', '1']) {
      expect((await t.admin('GET', `/admin/resources/${id}`)).status).toBe(404);
      expect((await t.admin('PATCH', `/admin/resources/${id}`, { name: 'X' })).status).toBe(404);
      expect((await t.admin('DELETE', `/admin/resources/${id}`)).status).toBe(404);
      const put = await t.admin('PUT', `/admin/resources/${id}/permissions/x:read`, {});
      expect(put).toMatchObject({ status: 404, body: { error: 'not_found' } });
      expect((await t.admin('DELETE', `/admin/resources/${id}/permissions/x:read`)).status).toBe(
        404,
      );
    }
  });

  test('permissions: PUT creates (201) or describes (200), DELETE removes; audited', async () => {
    const r = await create({ identifier: fresh('docs'), name: 'Docs' });
    const at = `/admin/resources/${r.id}/permissions`;
    const created = await t.admin('PUT', `${at}/docs:read`, { description: 'Read documents' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: r.id,
      permissions: [{ name: 'docs:read', description: 'Read documents' }],
    });
    const star = await t.admin('PUT', `${at}/docs:*`);
    expect(star.status).toBe(201);
    const described = await t.admin('PUT', `${at}/docs:read`, { description: 'See documents' });
    expect(described.status).toBe(200);
    // Without a description the one it has stays.
    const kept = await t.admin('PUT', `${at}/docs:read`, {});
    expect(kept.status).toBe(200);
    expect(kept.body.permissions).toEqual([
      { name: 'docs:*', description: '' },
      { name: 'docs:read', description: 'See documents' },
    ]);

    const badName = await t.admin('PUT', `${at}/Docs:Read`, {});
    expect(badName).toMatchObject({
      status: 422,
      body: { fields: { name: [expect.any(String)] } },
    });
    const badBody = await t.admin('PUT', `${at}/docs:write`, { description: 5, extra: 1 });
    expect(badBody.body.fields).toEqual({
      description: [expect.any(String)],
      extra: ['unknown or read-only field'],
    });

    expect((await t.admin('DELETE', `${at}/docs:*`)).status).toBe(204);
    const gone = await t.admin('DELETE', `${at}/docs:*`);
    expect(gone).toMatchObject({ status: 404, body: { error: 'not_found' } });
    expect((await t.admin('GET', `/admin/resources/${r.id}`)).body.permissions).toEqual([
      { name: 'docs:read', description: 'See documents' },
    ]);

    const created_ = await auditOf('permission_created', r.identifier);
    expect(created_.map((e) => e.detail)).toEqual([
      { resource: r.identifier, permission: 'docs:*', description: '' },
      { resource: r.identifier, permission: 'docs:read', description: 'Read documents' },
    ]);
    expect((await auditOf('permission_updated', r.identifier)).map((e) => e.detail)).toEqual([
      { resource: r.identifier, permission: 'docs:read', description: 'See documents' },
      { resource: r.identifier, permission: 'docs:read', description: 'See documents' },
    ]);
    expect(await auditOf('permission_deleted', r.identifier)).toEqual([
      expect.objectContaining({
        actor: 'admin-token',
        detail: { resource: r.identifier, permission: 'docs:*', roles: [] },
      }),
    ]);
  });

  test('a permission or a resource removed is removed from the roles that granted it', async () => {
    const r = await create({
      identifier: fresh('reports'),
      name: 'Reports',
      permissions: [{ name: 'reports:read' }, { name: 'reports:export' }],
    });
    const role = `reporter-${randomUUID().slice(0, 8)}`;
    const other = `auditor-${randomUUID().slice(0, 8)}`;
    for (const name of [role, other]) {
      const put = await t.admin('PUT', `/admin/roles/${name}`, {
        permissions: ['orders:read'],
        grants: [{ resource: r.identifier, permissions: ['reports:read', 'reports:export'] }],
      });
      expect(put.status).toBe(201);
    }
    // An unknown permission of this resource is refused in a role.
    const unknown = await t.admin('PUT', `/admin/roles/${role}`, {
      grants: [{ resource: r.identifier, permissions: ['reports:delete'] }],
    });
    expect(unknown.body.fields.grants).toEqual([
      expect.stringMatching(/^unknown permission reports:delete/),
    ]);

    expect(
      (await t.admin('DELETE', `/admin/resources/${r.id}/permissions/reports:export`)).status,
    ).toBe(204);
    const after = await t.admin('GET', `/admin/roles/${role}`);
    expect(after.body.grants).toContainEqual({
      resource: r.identifier,
      resourceId: r.id,
      permissions: ['reports:read'],
    });
    expect((await auditOf('permission_deleted', r.identifier))[0]!.detail).toEqual({
      resource: r.identifier,
      permission: 'reports:export',
      roles: [other, role].sort(),
    });

    expect((await t.admin('DELETE', `/admin/resources/${r.id}`)).status).toBe(204);
    const left = await t.admin('GET', `/admin/roles/${role}`);
    expect(left.body).toMatchObject({
      permissions: ['orders:read'],
      grants: [{ resource: t.apiAudience, permissions: ['orders:read'] }],
    });
    expect((await auditOf('resource_deleted', r.identifier))[0]!.detail).toEqual({
      resource: r.identifier,
      roles: [other, role].sort(),
    });
    // The identifier is free again.
    await create({ identifier: r.identifier, name: 'Reports again' });
  });
});

describe('admin: resources and roles refuse hostile input with a 4xx, never a 500', () => {
  test('NUL bytes, prototype-named keys, bad path encodings, foreign ids', async () => {
    const r = await create({ identifier: fresh('hostile'), name: 'Hostile' });
    const answers = await Promise.all([
      t.admin('POST', '/admin/resources', { identifier: fresh('nul'), name: 'a\u0000b' }),
      t.admin('POST', '/admin/resources', { identifier: `${fresh('nul')}/\u0000`, name: 'N' }),
      t.admin('POST', '/admin/resources', {
        identifier: fresh('nul'),
        name: 'N',
        permissions: [{ name: 'x:read', description: 'd\u0000' }],
      }),
      t.admin('POST', '/admin/resources', JSON.parse('{"__proto__":{"builtIn":true}}')),
      t.admin('PATCH', `/admin/resources/${r.id}`, JSON.parse('{"__proto__":{"name":"x"}}')),
      t.admin('PUT', `/admin/resources/${r.id}/permissions/x%00:read`, {}),
      t.admin('PUT', `/admin/resources/${r.id}/permissions/%E0%A4%A`, {}),
      t.admin('PUT', `/admin/resources/${r.id}/permissions/x:read`, { description: 'a\u0000' }),
      t.admin('GET', '/admin/resources/%E0%A4%A'),
      t.admin('GET', '/admin/resources/not-a-uuid'),
      t.admin('DELETE', '/admin/resources/00000000-0000-4000-8000-00000000000f'),
      t.admin('PUT', '/admin/roles/hostile', JSON.parse('{"__proto__":{"permissions":[]}}')),
      t.admin('PUT', '/admin/roles/hostile', {
        grants: [{ resource: 'https://nul\u0000.example', permissions: ['x:read'] }],
      }),
      t.admin('PUT', '/admin/roles/hostile', { grants: { __proto__: [] } }),
      t.admin('PUT', '/admin/roles/hostile', { description: 'a\u0000', permissions: [] }),
    ]);
    for (const { status, body } of answers) {
      expect([status, typeof body['error']]).toEqual([expect.any(Number), 'string']);
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(500);
    }
  });
});

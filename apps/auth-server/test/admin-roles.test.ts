/**
 * Roles as data through the admin API (docs/roles.md): the vocabulary, the seed, creating and
 * replacing a role, deleting one nobody holds, every change audited; users, clients and the
 * server's configuration name only roles that exist.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { PERMISSIONS, ROLE_PERMISSIONS } from '@portcullis/claims';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import { createClient, createUser, decodeJwt, discover } from '@portcullis/testing';

let t: TestAuthServer;
beforeAll(async () => {
  t = await startTestAuthServer();
});
afterAll(async () => {
  await t?.close();
});

/** A role name no other test uses. */
const fresh = (prefix = 'role') => `${prefix}-${randomUUID().slice(0, 8)}`;

/** The newest audit rows of `kind` about the role `name`. */
async function auditOf(kind: string, name: string) {
  const res = await t.admin('GET', `/admin/audit?kind=${kind}&limit=100`);
  return (res.body.items as { detail: Record<string, unknown> }[]).filter(
    (e) => e.detail['role'] === name,
  );
}

describe('admin: roles', () => {
  test('the vocabulary is every permission the API declares; the seed is the built-in roles', async () => {
    const permissions = await t.admin('GET', '/admin/permissions');
    expect(permissions.status).toBe(200);
    expect(permissions.body).toEqual({ items: [...PERMISSIONS] });

    const roles = await t.admin('GET', '/admin/roles');
    expect(roles.status).toBe(200);
    for (const [name, granted] of Object.entries(ROLE_PERMISSIONS)) {
      expect(roles.body.items).toContainEqual({
        name,
        permissions: [...granted],
        description: expect.any(String),
        builtIn: true,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
    }
    const viewer = await t.admin('GET', '/admin/roles/viewer');
    expect(viewer.body).toMatchObject({ name: 'viewer', builtIn: true });
    for (const name of ['nobody', 'Viewer', 'no%20body']) {
      const missing = await t.admin('GET', `/admin/roles/${name}`);
      expect(missing).toMatchObject({ status: 404, body: { error: 'not_found' } });
      expect((await t.admin('DELETE', `/admin/roles/${name}`)).status).toBe(404);
    }
  });

  test('PUT creates (201) then replaces (200); each change is audited', async () => {
    const name = fresh('auditor');
    const created = await t.admin('PUT', `/admin/roles/${name}`, {
      permissions: ['orders:read', 'payments:read', 'orders:read'],
      description: 'Reads orders and payments',
    });
    expect(created.status).toBe(201);
    expect(created.res.headers.get('location')).toBe(`/admin/roles/${name}`);
    expect(created.body).toMatchObject({
      name,
      permissions: ['orders:read', 'payments:read'],
      description: 'Reads orders and payments',
      builtIn: false,
    });

    const replaced = await t.admin('PUT', `/admin/roles/${name}`, { permissions: ['events:read'] });
    expect(replaced.status).toBe(200);
    // Without a description the one it had stays.
    expect(replaced.body).toMatchObject({
      permissions: ['events:read'],
      description: 'Reads orders and payments',
    });
    expect((await t.admin('GET', `/admin/roles/${name}`)).body.permissions).toEqual([
      'events:read',
    ]);

    expect(await auditOf('role_created', name)).toEqual([
      expect.objectContaining({
        detail: { role: name, permissions: ['orders:read', 'payments:read'] },
      }),
    ]);
    expect(await auditOf('role_updated', name)).toEqual([
      expect.objectContaining({
        detail: { role: name, from: ['orders:read', 'payments:read'], to: ['events:read'] },
      }),
    ]);

    // A built-in role's permissions change like any other's.
    const before = (await t.admin('GET', '/admin/roles/editor')).body.permissions as string[];
    const editor = await t.admin('PUT', '/admin/roles/editor', {
      permissions: [...before, 'payments:read'],
    });
    expect(editor.body).toMatchObject({ builtIn: true, permissions: [...before, 'payments:read'] });
    await t.admin('PUT', '/admin/roles/editor', { permissions: before });
  });

  test('a permission outside the vocabulary, a bad name or body is refused, naming it', async () => {
    const name = fresh();
    const unknown = await t.admin('PUT', `/admin/roles/${name}`, {
      permissions: ['orders:read', 'orders:approve', 'everything'],
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.error).toBe('validation_failed');
    expect(unknown.body.fields.permissions).toEqual([
      expect.stringMatching(/^unknown permission orders:approve/),
      expect.stringMatching(/^unknown permission everything/),
    ]);
    expect((await t.admin('GET', `/admin/roles/${name}`)).status).toBe(404);

    for (const bad of ['Admin', '1role', 'a'.repeat(41), 'r%20le', 'role.x']) {
      const res = await t.admin('PUT', `/admin/roles/${bad}`, { permissions: [] });
      expect([bad, res.status, res.body.fields]).toEqual([bad, 422, { name: expect.any(Array) }]);
    }
    const extra = await t.admin('PUT', `/admin/roles/${name}`, { permissions: [], grants: [] });
    expect(extra.body.fields).toEqual({ grants: ['unknown or read-only field'] });
    const none = await t.admin('PUT', `/admin/roles/${name}`, { description: 'x' });
    expect(none.body.fields.permissions).toBeDefined();
  });

  test('users and clients name only roles that exist', async () => {
    const name = fresh('support');
    await t.admin('PUT', `/admin/roles/${name}`, { permissions: ['orders:read'] });

    const user = await createUser(t, [name, 'viewer']);
    expect(user.roles).toEqual([name, 'viewer']);
    const patched = await t.admin('PATCH', `/admin/users/${user.id}`, { roles: [name] });
    expect(patched).toMatchObject({ status: 200, body: { roles: [name] } });

    const refused = await t.admin('PATCH', `/admin/users/${user.id}`, {
      roles: [name, 'ghost-role'],
    });
    expect(refused.status).toBe(422);
    expect(refused.body.fields.roles).toEqual([expect.stringMatching(/^unknown role ghost-role/)]);
    const created = await t.admin('POST', '/admin/users', {
      email: `${fresh('u')}@example.com`,
      password: 'correct horse battery staple 42',
      roles: ['ghost-role'],
    });
    expect(created.status).toBe(422);
    expect(created.body.fields.roles).toEqual([expect.stringMatching(/ghost-role/)]);

    // A service client holding the new role: its tokens carry it.
    const service = await createClient(t, { grant_types: ['client_credentials'], roles: [name] });
    const cc = await oidc.clientCredentialsGrant(
      await discover(t, service.client_id, service.client_secret),
      { scope: 'api' },
    );
    expect(decodeJwt(cc.access_token).payload.roles).toEqual([name]);
    const badClient = await t.admin('PATCH', `/admin/clients/${service.client_id}`, {
      roles: ['ghost-role'],
    });
    expect(badClient.status).toBe(422);
    expect(badClient.body.fields.roles).toEqual([expect.stringMatching(/ghost-role/)]);
  });

  test('DELETE: refused for built-ins and while anyone holds the role; then 204, audited', async () => {
    const builtIn = await t.admin('DELETE', '/admin/roles/viewer');
    expect(builtIn).toMatchObject({ status: 409, body: { error: 'conflict' } });
    expect((await t.admin('DELETE', '/admin/roles/nobody')).status).toBe(404);

    const name = fresh('temp');
    await t.admin('PUT', `/admin/roles/${name}`, { permissions: ['uploads:read'] });
    const user = await createUser(t, [name]);
    const service = await createClient(t, { grant_types: ['client_credentials'], roles: [name] });

    const held = await t.admin('DELETE', `/admin/roles/${name}`);
    expect(held.status).toBe(409);
    expect(held.body.message).toMatch(/1 user\(s\) and 1 client\(s\)/);
    await t.admin('PATCH', `/admin/users/${user.id}`, { roles: [] });
    expect((await t.admin('DELETE', `/admin/roles/${name}`)).body.message).toMatch(
      /0 user\(s\) and 1 client\(s\)/,
    );
    await t.admin('PATCH', `/admin/clients/${service.client_id}`, { roles: [] });

    const deleted = await t.admin('DELETE', `/admin/roles/${name}`);
    expect(deleted.status).toBe(204);
    expect((await t.admin('GET', `/admin/roles/${name}`)).status).toBe(404);
    expect(await auditOf('role_deleted', name)).toEqual([
      expect.objectContaining({ detail: { role: name, permissions: ['uploads:read'] } }),
    ]);
    // Gone: no one can be given it.
    const assign = await t.admin('PATCH', `/admin/users/${user.id}`, { roles: [name] });
    expect(assign.status).toBe(422);
  });

  test('SIGNUP_ROLES must name roles that exist, and such a role is not deleted', async () => {
    const name = fresh('member');
    await expect(t.startInstance({ SIGNUP: 'open', SIGNUP_ROLES: name })).rejects.toThrow(
      new RegExp(`SIGNUP_ROLES or REGISTRATION_ROLES names roles that do not exist: ${name}`),
    );
    // Off, the variable is not used, and not checked.
    const off = await t.startInstance({ SIGNUP: 'off', SIGNUP_ROLES: name });
    await off.close();

    await t.admin('PUT', `/admin/roles/${name}`, { permissions: ['orders:read'] });
    const signup = await t.startInstance({
      SIGNUP: 'open',
      SIGNUP_ROLES: name,
      REGISTRATION: 'token',
      REGISTRATION_ROLES: 'viewer',
    });
    try {
      const refused = await signup.admin('DELETE', `/admin/roles/${name}`);
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(/SIGNUP_ROLES/);
    } finally {
      await signup.close();
    }
    // The instance without it deletes it.
    expect((await t.admin('DELETE', `/admin/roles/${name}`)).status).toBe(204);
  });
});

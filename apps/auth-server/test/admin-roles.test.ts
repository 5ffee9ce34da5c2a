/**
 * Roles as data through the admin API (docs/roles.md): the vocabulary, the seed, creating and
 * replacing a role's grants on one resource or several, deleting one nobody holds, every change
 * audited; users, clients and the server's configuration name only roles that exist; a role
 * taken from a user or a client ends the tokens that carry it.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as oidc from 'openid-client';
import { BUILT_IN_RESOURCE_ID, createSharedDenyList } from '@portcullis/db';
import { startTestAuthServer, type TestAuthServer } from '@portcullis/testing/auth-server';
import {
  createClient,
  createUser,
  decodeJwt,
  discover,
  pkceSignIn,
  publicSpa,
  rethrow,
} from '@portcullis/testing';

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
  return (res.body.items as { detail: Record<string, unknown>; actor: string }[]).filter(
    (e) => e.detail['role'] === name,
  );
}

/** A resource server of its own with `permissions` (its actions on `invoices`). */
async function invoicesApi(...actions: string[]) {
  const identifier = `https://${fresh('invoices')}.example.com`;
  const res = await t.admin('POST', '/admin/resources', {
    identifier,
    name: 'Invoices',
    permissions: actions.map((a) => ({ name: `invoices:${a}` })),
  });
  expect(res.status).toBe(201);
  return { id: res.body.id as string, identifier };
}

/** Whether an API instance (reading only the revocations table) refuses a token with these claims. */
async function deniedByApi(claims: { sub: string; iat: number }): Promise<boolean> {
  const api = createSharedDenyList({
    db: t.database.db,
    onError: rethrow,
    bus: new EventEmitter(),
  });
  await api.start();
  try {
    return api.isDenied(claims);
  } finally {
    await api.close();
  }
}

/**
 * Waits into the next whole second: a token's `iat` is whole seconds, so one minted in the
 * second of a revocation counts as before it (packages/claims deny-list.ts).
 */
const nextSecond = () =>
  new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5));

// Frozen here as migrations 026 and 029 seed them.
const SEED = {
  admin: ['api-keys:*', 'events:read', 'orders:*', 'payments:*', 'uploads:*', 'users:*'],
  editor: [
    'events:read',
    'orders:read',
    'orders:write',
    'payments:create',
    'uploads:*',
    'users:read',
  ],
  viewer: ['events:read', 'orders:read', 'users:read'],
};

describe('admin: roles', () => {
  test("the vocabulary is the built-in API's permissions; the seed is the built-in roles", async () => {
    const permissions = await t.admin('GET', '/admin/permissions');
    expect(permissions.status).toBe(200);
    const builtIn = await t.admin('GET', `/admin/resources/${BUILT_IN_RESOURCE_ID}`);
    expect(permissions.body).toEqual({
      items: (builtIn.body.permissions as { name: string }[]).map((p) => p.name),
    });
    expect(permissions.body.items).toEqual(
      expect.arrayContaining(['orders:read', 'orders:*', 'api-keys:delete', 'events:read']),
    );

    const roles = await t.admin('GET', '/admin/roles');
    expect(roles.status).toBe(200);
    for (const [name, granted] of Object.entries(SEED)) {
      expect(roles.body.items).toContainEqual({
        name,
        description: expect.any(String),
        builtIn: true,
        permissions: granted,
        grants: [
          { resource: t.apiAudience, resourceId: BUILT_IN_RESOURCE_ID, permissions: granted },
        ],
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
      permissions: ['payments:read', 'orders:read', 'orders:read'],
      description: 'Reads orders and payments',
    });
    expect(created.status).toBe(201);
    expect(created.res.headers.get('location')).toBe(`/admin/roles/${name}`);
    expect(created.body).toMatchObject({
      name,
      permissions: ['orders:read', 'payments:read'],
      grants: [{ resource: t.apiAudience, permissions: ['orders:read', 'payments:read'] }],
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
        actor: 'admin-token',
        detail: { role: name, grants: { [t.apiAudience]: ['orders:read', 'payments:read'] } },
      }),
    ]);
    expect(await auditOf('role_updated', name)).toEqual([
      expect.objectContaining({
        detail: {
          role: name,
          from: { [t.apiAudience]: ['orders:read', 'payments:read'] },
          to: { [t.apiAudience]: ['events:read'] },
        },
      }),
    ]);

    // A built-in role's permissions change like any other's.
    const before = (await t.admin('GET', '/admin/roles/editor')).body.permissions as string[];
    const editor = await t.admin('PUT', '/admin/roles/editor', {
      permissions: [...before, 'payments:read'],
    });
    expect(editor.body).toMatchObject({
      builtIn: true,
      permissions: [...before, 'payments:read'].sort(),
    });
    await t.admin('PUT', '/admin/roles/editor', { permissions: before });
  });

  test('a role grants on two resources; PUT replaces the grants whole', async () => {
    const invoices = await invoicesApi('read', 'write');
    const name = fresh('billing');
    const both = await t.admin('PUT', `/admin/roles/${name}`, {
      permissions: ['orders:read'],
      grants: [{ resource: invoices.identifier, permissions: ['invoices:write', 'invoices:read'] }],
    });
    expect(both.status).toBe(201);
    const grants = [
      { resource: t.apiAudience, resourceId: BUILT_IN_RESOURCE_ID, permissions: ['orders:read'] },
      {
        resource: invoices.identifier,
        resourceId: invoices.id,
        permissions: ['invoices:read', 'invoices:write'],
      },
    ];
    expect(both.body).toMatchObject({ permissions: ['orders:read'] });
    expect(both.body.grants).toEqual(expect.arrayContaining(grants));
    expect(both.body.grants).toHaveLength(2);
    const listed = (await t.admin('GET', '/admin/roles')).body.items as { name: string }[];
    expect(listed.find((r) => r.name === name)).toMatchObject({ grants: both.body.grants });

    // The built-in API named by its identifier in grants is the same as `permissions`.
    const byGrants = await t.admin('PUT', `/admin/roles/${name}`, {
      grants: [
        { resource: t.apiAudience, permissions: ['events:read'] },
        { resource: invoices.identifier, permissions: ['invoices:read'] },
      ],
    });
    expect(byGrants.status).toBe(200);
    expect(byGrants.body.permissions).toEqual(['events:read']);
    expect(await auditOf('role_updated', name)).toEqual([
      expect.objectContaining({
        detail: {
          role: name,
          from: { [t.apiAudience]: ['orders:read'], [invoices.identifier]: grants[1]!.permissions },
          to: { [t.apiAudience]: ['events:read'], [invoices.identifier]: ['invoices:read'] },
        },
      }),
    ]);

    // `permissions` alone: the grants on other resources go too (the CLI merges for you).
    const only = await t.admin('PUT', `/admin/roles/${name}`, { permissions: ['orders:read'] });
    expect(only.body.grants).toEqual([grants[0]]);
    const none = await t.admin('PUT', `/admin/roles/${name}`, { grants: [] });
    expect(none.body).toMatchObject({ permissions: [], grants: [] });
  });

  test('an unknown permission or resource, a bad name or body is refused, naming it', async () => {
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

    // A permission of one resource is not one of another's.
    const invoices = await invoicesApi('read');
    const elsewhere = await t.admin('PUT', `/admin/roles/${name}`, {
      permissions: ['invoices:read'],
      grants: [
        { resource: invoices.identifier, permissions: ['invoices:read', 'orders:read'] },
        { resource: 'https://nowhere.example.com', permissions: ['x:read'] },
      ],
    });
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.fields).toEqual({
      permissions: [expect.stringMatching(/^unknown permission invoices:read/)],
      grants: [
        expect.stringMatching(/^unknown permission orders:read: GET \/admin\/resources\//),
        expect.stringMatching(/^unknown resource https:\/\/nowhere\.example\.com/),
      ],
    });
    const twice = await t.admin('PUT', `/admin/roles/${name}`, {
      permissions: ['orders:read'],
      grants: [{ resource: t.apiAudience, permissions: ['orders:read'] }],
    });
    expect(twice.body.fields).toEqual({ grants: [expect.stringMatching(/named twice/)] });
    expect((await t.admin('GET', `/admin/roles/${name}`)).status).toBe(404);

    for (const bad of ['Admin', '1role', 'a'.repeat(41), 'r%20le', 'role.x']) {
      const res = await t.admin('PUT', `/admin/roles/${bad}`, { permissions: [] });
      expect([bad, res.status, res.body.fields]).toEqual([bad, 422, { name: expect.any(Array) }]);
    }
    const extra = await t.admin('PUT', `/admin/roles/${name}`, { permissions: [], scope: 'x' });
    expect(extra.body.fields).toEqual({ scope: ['unknown or read-only field'] });
    const none = await t.admin('PUT', `/admin/roles/${name}`, { description: 'x' });
    expect(none.body.fields.permissions).toBeDefined();
    const shape = await t.admin('PUT', `/admin/roles/${name}`, { grants: [{ resource: 1 }] });
    expect(shape.body.fields.grants).toBeDefined();
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

  test("a role taken from a user ends the user's tokens; a role given ends nothing", async () => {
    const spa = await publicSpa(t);
    const config = await discover(t, spa.client_id);
    const scope = 'openid offline_access api';

    const given = await createUser(t, ['viewer']);
    const kept = await pkceSignIn(config, given, { scope });
    const more = await t.admin('PATCH', `/admin/users/${given.id}`, {
      roles: ['viewer', 'editor'],
    });
    expect(more.status).toBe(200);
    expect(await deniedByApi(decodeJwt(kept.access_token).payload)).toBe(false);
    await expect(oidc.refreshTokenGrant(config, kept.refresh_token!)).resolves.toMatchObject({
      access_token: expect.any(String),
    });

    const user = await createUser(t, ['viewer', 'editor']);
    const tokens = await pkceSignIn(config, user, { scope });
    const less = await t.admin('PATCH', `/admin/users/${user.id}`, { roles: ['viewer'] });
    expect(less).toMatchObject({ status: 200, body: { roles: ['viewer'] } });
    // The API's deny list (the revocations table) refuses the access token minted before.
    expect(await deniedByApi(decodeJwt(tokens.access_token).payload)).toBe(true);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({
      error: 'invalid_grant',
    });
    const audit = await t.admin('GET', `/admin/audit?kind=user_roles_changed&subject=${user.id}`);
    expect(audit.body.items[0].detail).toEqual({
      from: ['viewer', 'editor'],
      to: ['viewer'],
      tokensEnded: true,
    });
    // Signing in again gets a token with the roles now held.
    await nextSecond();
    const again = await pkceSignIn(config, user, { scope });
    expect(decodeJwt(again.access_token).payload.roles).toEqual(['viewer']);
    expect(await deniedByApi(decodeJwt(again.access_token).payload)).toBe(false);
  });

  test("a role taken from a client ends its client-credentials tokens; a role given doesn't", async () => {
    const token = async (c: { client_id: string; client_secret?: string }) => {
      const cc = await oidc.clientCredentialsGrant(
        await discover(t, c.client_id, c.client_secret),
        { scope: 'api' },
      );
      return decodeJwt(cc.access_token).payload as { sub: string; iat: number };
    };
    const grown = await createClient(t, { grant_types: ['client_credentials'], roles: ['viewer'] });
    const before = await token(grown);
    const added = await t.admin('PATCH', `/admin/clients/${grown.client_id}`, {
      roles: ['viewer', 'editor'],
    });
    expect(added.status).toBe(200);
    expect(await deniedByApi(before)).toBe(false);

    const service = await createClient(t, {
      grant_types: ['client_credentials'],
      roles: ['viewer', 'editor'],
    });
    const claims = await token(service);
    expect(claims.sub).toBe(`client:${service.client_id}`);
    const taken = await t.admin('PATCH', `/admin/clients/${service.client_id}`, {
      roles: ['editor'],
    });
    expect(taken).toMatchObject({ status: 200, body: { roles: ['editor'] } });
    expect(await deniedByApi(claims)).toBe(true);
    // A change of anything else ends nothing more; a new token is not refused.
    await t.admin('PATCH', `/admin/clients/${service.client_id}`, { client_name: 'Renamed' });
    await nextSecond();
    const next = await token(service);
    expect(await deniedByApi(next)).toBe(false);
    const audit = await t.admin(
      'GET',
      `/admin/audit?kind=client_updated&client_id=${service.client_id}`,
    );
    expect(audit.body.items.map((e: { detail: unknown }) => e.detail)).toEqual([
      { changed: ['client_name'] },
      { changed: ['roles'], tokensEnded: true },
    ]);
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
      expect.objectContaining({
        detail: { role: name, grants: { [t.apiAudience]: ['uploads:read'] } },
      }),
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

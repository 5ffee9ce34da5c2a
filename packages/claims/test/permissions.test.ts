import { describe, expect, it } from '@jest/globals';
import {
  authorize,
  ForbiddenError,
  hasPermission,
  narrowPermissions,
  Perm,
  PERMISSIONS,
  permissionsForRoles,
  principalFromClaims,
  requirePermission,
  ROLE_PERMISSIONS,
  STATIC_ROLES,
  type AccessTokenClaims,
  type Principal,
} from '../src/index.js';

function tokenClaims(overrides: Partial<AccessTokenClaims> = {}): AccessTokenClaims {
  return {
    iss: 'i',
    aud: 'a',
    sub: 'user-1',
    client_id: 'spa',
    scope: 'openid api',
    roles: ['editor'],
    iat: 1,
    exp: 2,
    jti: 'j',
    ...overrides,
  };
}

describe('hasPermission', () => {
  it('matches exact permissions and the wildcard of the same resource only', () => {
    expect(hasPermission([Perm.OrdersRead], Perm.OrdersRead)).toBe(true);
    expect(hasPermission([Perm.OrdersAll], Perm.OrdersWrite)).toBe(true);
    expect(hasPermission([Perm.OrdersAll], Perm.OrdersAll)).toBe(true);
    expect(hasPermission([Perm.OrdersAll], Perm.PaymentsCreate)).toBe(false);
    expect(hasPermission([Perm.UsersAll], 'users-admin:read')).toBe(false);
    expect(hasPermission([Perm.OrdersRead], Perm.OrdersAll)).toBe(false);
    expect(hasPermission([Perm.OrdersRead], Perm.OrdersWrite)).toBe(false);
  });

  it('never matches malformed strings on either side', () => {
    const malformed = [
      '*',
      ':*',
      '*:*',
      'orders:',
      ':read',
      'orders:*:x',
      'orders:read ',
      ' orders:read',
      'orders :read',
      'Orders:read',
      'orders:READ',
      'orders::read',
      'orders',
      '',
      'orders:re ad',
      'orders:*x',
    ];
    for (const bad of malformed) {
      expect(hasPermission([bad], Perm.OrdersRead)).toBe(false);
      expect(hasPermission([bad, Perm.OrdersAll], bad)).toBe(false);
    }
    expect(hasPermission([42 as unknown as string], Perm.OrdersRead)).toBe(false);
  });
});

describe('roles and scope', () => {
  it('maps the role table of the README', () => {
    expect(permissionsForRoles(['viewer']).sort()).toEqual([
      'events:read',
      'orders:read',
      'users:read',
    ]);
    expect(permissionsForRoles(['admin'])).toContain('api-keys:*');
    expect(permissionsForRoles(['editor'])).toContain('payments:create');
    expect(permissionsForRoles(['superuser', '__proto__', 'constructor'])).toEqual([]);
    expect(
      permissionsForRoles(['viewer', 'editor']).filter((p) => p === 'users:read'),
    ).toHaveLength(1);
  });

  it('reads roles from a RoleSource; the vocabulary is every declared permission once', () => {
    const source = {
      permissionsOf: (role: string) => (role === 'auditor' ? ['orders:read'] : undefined),
    };
    expect(permissionsForRoles(['auditor', 'admin'], source)).toEqual(['orders:read']);
    expect(permissionsForRoles(['admin'], STATIC_ROLES)).toEqual(permissionsForRoles(['admin']));
    expect(new Set(PERMISSIONS)).toEqual(new Set(Object.values(Perm)));
    expect(PERMISSIONS).toHaveLength(new Set(PERMISSIONS).size);
    for (const permissions of Object.values(ROLE_PERMISSIONS))
      for (const p of permissions) expect(PERMISSIONS).toContain(p);
  });

  it('narrows by scope and never widens', () => {
    const editor = permissionsForRoles(['editor']);
    expect(narrowPermissions(editor, ['api']).sort()).toEqual([...editor].sort());
    expect(narrowPermissions(editor, ['openid', 'profile', 'email', 'offline_access'])).toEqual([]);
    expect(narrowPermissions(editor, ['orders:read'])).toEqual(['orders:read']);
    // A scope beyond the role grants nothing extra.
    expect(
      narrowPermissions(editor, ['users:delete', 'users:*', 'orders:*', 'api-keys:*']).sort(),
    ).toEqual(['orders:read', 'orders:write', 'users:read']);
    // Role wildcard, specific scope: the specific action only.
    expect(narrowPermissions(['orders:*'], ['orders:read'])).toEqual(['orders:read']);
    expect(narrowPermissions(['orders:*'], ['orders:*'])).toEqual(['orders:*']);
    expect(narrowPermissions(editor, ['*', 'orders:*:x', 'uploads:create'])).toEqual([
      'uploads:create',
    ]);
    expect(narrowPermissions([], ['api', 'orders:read'])).toEqual([]);
  });

  it('builds principals for user and client tokens', () => {
    const user = principalFromClaims(
      tokenClaims({ scope: 'openid orders:read', email: 'a@x', grant_id: 'g1', roles: ['editor'] }),
    );
    expect(user).toEqual({
      subject: 'user-1',
      kind: 'user',
      roles: ['editor'],
      permissions: ['orders:read'],
      scope: ['openid', 'orders:read'],
      authMethod: 'jwt',
      clientId: 'spa',
      email: 'a@x',
      tokenId: 'j',
      grantId: 'g1',
      expiresAt: 2,
    } satisfies Principal);
    const client = principalFromClaims(
      tokenClaims({
        sub: 'client:svc',
        client_id: 'svc',
        roles: ['viewer'],
        scope: 'orders:read orders:write',
      }),
    );
    expect(client).toMatchObject({
      kind: 'client',
      subject: 'client:svc',
      permissions: ['orders:read'],
    });
    expect(principalFromClaims(tokenClaims({ scope: '' })).permissions).toEqual([]);
  });
});

describe('authorize (RBAC + ABAC)', () => {
  const base = { scope: [] as string[], authMethod: 'jwt' as const };
  const owner: Principal = {
    ...base,
    roles: ['editor'],
    subject: 'u1',
    kind: 'user',
    permissions: permissionsForRoles(['editor']),
  };
  const other: Principal = { ...owner, subject: 'u2' };
  const admin: Principal = {
    ...base,
    roles: ['admin'],
    subject: 'u3',
    kind: 'user',
    permissions: permissionsForRoles(['admin']),
  };
  const viewer: Principal = {
    ...base,
    roles: ['viewer'],
    subject: 'u1',
    kind: 'user',
    permissions: permissionsForRoles(['viewer']),
  };
  const client: Principal = { ...owner, subject: 'client:u1', kind: 'client' };

  it('lets the owner with the permission, and admins, act; not others', () => {
    expect(authorize(owner, Perm.OrdersWrite, { ownerId: 'u1' })).toBe(true);
    expect(authorize(other, Perm.OrdersWrite, { ownerId: 'u1' })).toBe(false);
    expect(authorize(admin, Perm.OrdersWrite, { ownerId: 'u1' })).toBe(true);
    expect(authorize(viewer, Perm.OrdersWrite, { ownerId: 'u1' })).toBe(false);
    expect(authorize(client, Perm.OrdersWrite, { ownerId: 'u1' })).toBe(false);
    expect(authorize(owner, Perm.OrdersDelete, { ownerId: 'u1' })).toBe(false);
  });

  it('treats a missing owner as owned by nobody, and no resource as RBAC only', () => {
    expect(authorize(owner, Perm.OrdersWrite, { ownerId: null })).toBe(false);
    expect(authorize(owner, Perm.OrdersWrite, { ownerId: '' })).toBe(false);
    expect(authorize(admin, Perm.OrdersWrite, { ownerId: null })).toBe(true);
    expect(authorize(owner, Perm.OrdersWrite)).toBe(true);
    expect(authorize(viewer, Perm.UsersDelete)).toBe(false);
    expect(authorize(admin, Perm.UsersDelete)).toBe(true);
  });

  it('requirePermission throws a 403 ForbiddenError', () => {
    expect(() => requirePermission(viewer, Perm.UsersDelete)).toThrow(ForbiddenError);
    try {
      requirePermission(other, Perm.OrdersWrite, { ownerId: 'u1' });
    } catch (error) {
      expect(error).toMatchObject({ status: 403, code: 'forbidden', expose: true });
    }
    expect(() => requirePermission(owner, Perm.OrdersWrite, { ownerId: 'u1' })).not.toThrow();
  });
});

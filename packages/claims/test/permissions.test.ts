import { describe, expect, it } from '@jest/globals';
import {
  authorize,
  ForbiddenError,
  hasPermission,
  narrowPermissions,
  permissionsForRoles,
  principalFromClaims,
  requirePermission,
  type AccessTokenClaims,
  type Principal,
  type RoleSource,
} from '../src/index.js';

// An outside service's vocabulary: the package names none of its own.
const Perm = {
  InvoicesRead: 'invoices:read',
  InvoicesWrite: 'invoices:write',
  InvoicesDelete: 'invoices:delete',
  InvoicesAll: 'invoices:*',
  RefundsCreate: 'refunds:create',
  UsersRead: 'users:read',
  UsersDelete: 'users:delete',
  UsersAll: 'users:*',
} as const;

/** A role table of the service's own (README "Roles"). */
const TABLE: Record<string, readonly string[]> = {
  admin: [Perm.UsersAll, Perm.InvoicesAll, 'refunds:*'],
  editor: [Perm.UsersRead, Perm.InvoicesRead, Perm.InvoicesWrite, Perm.RefundsCreate],
  viewer: [Perm.UsersRead, Perm.InvoicesRead],
};
const ROLES: RoleSource = {
  permissionsOf: (role) => (Object.hasOwn(TABLE, role) ? TABLE[role] : undefined),
};
const grantedTo = (roles: string[]) => permissionsForRoles(roles, ROLES);

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
    expect(hasPermission([Perm.InvoicesRead], Perm.InvoicesRead)).toBe(true);
    expect(hasPermission([Perm.InvoicesAll], Perm.InvoicesWrite)).toBe(true);
    expect(hasPermission([Perm.InvoicesAll], Perm.InvoicesAll)).toBe(true);
    expect(hasPermission([Perm.InvoicesAll], Perm.RefundsCreate)).toBe(false);
    expect(hasPermission([Perm.UsersAll], 'users-admin:read')).toBe(false);
    expect(hasPermission([Perm.InvoicesRead], Perm.InvoicesAll)).toBe(false);
    expect(hasPermission([Perm.InvoicesRead], Perm.InvoicesWrite)).toBe(false);
  });

  it('never matches malformed strings on either side', () => {
    const malformed = [
      '*',
      ':*',
      '*:*',
      'invoices:',
      ':read',
      'invoices:*:x',
      'invoices:read ',
      ' invoices:read',
      'invoices :read',
      'Invoices:read',
      'invoices:READ',
      'invoices::read',
      'invoices',
      '',
      'invoices:re ad',
      'invoices:*x',
    ];
    for (const bad of malformed) {
      expect(hasPermission([bad], Perm.InvoicesRead)).toBe(false);
      expect(hasPermission([bad, Perm.InvoicesAll], bad)).toBe(false);
    }
    expect(hasPermission([42 as unknown as string], Perm.InvoicesRead)).toBe(false);
  });
});

describe('roles and scope', () => {
  it('maps roles through a RoleSource; unknown roles grant nothing', () => {
    expect(grantedTo(['viewer']).sort()).toEqual(['invoices:read', 'users:read']);
    expect(grantedTo(['admin'])).toContain('refunds:*');
    expect(grantedTo(['superuser', '__proto__', 'constructor'])).toEqual([]);
    expect(grantedTo(['viewer', 'editor']).filter((p) => p === 'users:read')).toHaveLength(1);
    const source = {
      permissionsOf: (role: string) => (role === 'auditor' ? ['invoices:read'] : undefined),
    };
    expect(permissionsForRoles(['auditor', 'admin'], source)).toEqual(['invoices:read']);
  });

  it('narrows by scope and never widens', () => {
    const editor = grantedTo(['editor']);
    expect(narrowPermissions(editor, ['api']).sort()).toEqual([...editor].sort());
    expect(narrowPermissions(editor, ['openid', 'profile', 'email', 'offline_access'])).toEqual([]);
    expect(narrowPermissions(editor, ['invoices:read'])).toEqual(['invoices:read']);
    // A scope beyond the role grants nothing extra.
    expect(
      narrowPermissions(editor, ['users:delete', 'users:*', 'invoices:*', 'refunds:*']).sort(),
    ).toEqual(['invoices:read', 'invoices:write', 'refunds:create', 'users:read']);
    // Role wildcard, specific scope: the specific action only.
    expect(narrowPermissions(['invoices:*'], ['invoices:read'])).toEqual(['invoices:read']);
    expect(narrowPermissions(['invoices:*'], ['invoices:*'])).toEqual(['invoices:*']);
    expect(narrowPermissions(editor, ['*', 'invoices:*:x', 'refunds:create'])).toEqual([
      'refunds:create',
    ]);
    expect(narrowPermissions([], ['api', 'invoices:read'])).toEqual([]);
  });

  it('without a role table, takes the permissions from the scope the issuer narrowed', () => {
    const principal = principalFromClaims(
      tokenClaims({ scope: 'openid invoices:read refunds:* api Invoices:write *', roles: ['x'] }),
    );
    expect(principal.permissions).toEqual(['invoices:read', 'refunds:*']);
    expect(principal.roles).toEqual(['x']);
    // `api` means "what my roles grant": nothing where no role table says what that is.
    expect(principalFromClaims(tokenClaims({ scope: 'openid api' })).permissions).toEqual([]);
    expect(principalFromClaims(tokenClaims({ scope: '' })).permissions).toEqual([]);
  });

  it('builds principals for user and client tokens with a role table', () => {
    const user = principalFromClaims(
      tokenClaims({
        scope: 'openid invoices:read',
        email: 'a@x',
        grant_id: 'g1',
        roles: ['editor'],
      }),
      ROLES,
    );
    expect(user).toEqual({
      subject: 'user-1',
      kind: 'user',
      roles: ['editor'],
      permissions: ['invoices:read'],
      scope: ['openid', 'invoices:read'],
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
        scope: 'invoices:read invoices:write',
      }),
      ROLES,
    );
    expect(client).toMatchObject({
      kind: 'client',
      subject: 'client:svc',
      permissions: ['invoices:read'],
    });
    expect(principalFromClaims(tokenClaims({ scope: '' }), ROLES).permissions).toEqual([]);
  });
});

describe('authorize (RBAC + ABAC)', () => {
  const base = { scope: [] as string[], authMethod: 'jwt' as const };
  const owner: Principal = {
    ...base,
    roles: ['editor'],
    subject: 'u1',
    kind: 'user',
    permissions: grantedTo(['editor']),
  };
  const other: Principal = { ...owner, subject: 'u2' };
  const admin: Principal = {
    ...base,
    roles: ['admin'],
    subject: 'u3',
    kind: 'user',
    permissions: grantedTo(['admin']),
  };
  const viewer: Principal = {
    ...base,
    roles: ['viewer'],
    subject: 'u1',
    kind: 'user',
    permissions: grantedTo(['viewer']),
  };
  const client: Principal = { ...owner, subject: 'client:u1', kind: 'client' };

  it('lets the owner with the permission, and admins, act; not others', () => {
    expect(authorize(owner, Perm.InvoicesWrite, { ownerId: 'u1' })).toBe(true);
    expect(authorize(other, Perm.InvoicesWrite, { ownerId: 'u1' })).toBe(false);
    expect(authorize(admin, Perm.InvoicesWrite, { ownerId: 'u1' })).toBe(true);
    expect(authorize(viewer, Perm.InvoicesWrite, { ownerId: 'u1' })).toBe(false);
    expect(authorize(client, Perm.InvoicesWrite, { ownerId: 'u1' })).toBe(false);
    expect(authorize(owner, Perm.InvoicesDelete, { ownerId: 'u1' })).toBe(false);
  });

  it('treats a missing owner as owned by nobody, and no resource as RBAC only', () => {
    expect(authorize(owner, Perm.InvoicesWrite, { ownerId: null })).toBe(false);
    expect(authorize(owner, Perm.InvoicesWrite, { ownerId: '' })).toBe(false);
    expect(authorize(admin, Perm.InvoicesWrite, { ownerId: null })).toBe(true);
    expect(authorize(owner, Perm.InvoicesWrite)).toBe(true);
    expect(authorize(viewer, Perm.UsersDelete)).toBe(false);
    expect(authorize(admin, Perm.UsersDelete)).toBe(true);
  });

  it('requirePermission throws a 403 ForbiddenError', () => {
    expect(() => requirePermission(viewer, Perm.UsersDelete)).toThrow(ForbiddenError);
    try {
      requirePermission(other, Perm.InvoicesWrite, { ownerId: 'u1' });
    } catch (error) {
      expect(error).toMatchObject({ status: 403, code: 'forbidden', expose: true });
    }
    expect(() => requirePermission(owner, Perm.InvoicesWrite, { ownerId: 'u1' })).not.toThrow();
  });
});

// `<resource>:*` grants one resource's actions; no global `*`, a typo away from everything.
export const Perm = {
  UsersRead: 'users:read',
  UsersWrite: 'users:write',
  UsersDelete: 'users:delete',
  UsersAll: 'users:*',
  OrdersRead: 'orders:read',
  OrdersWrite: 'orders:write',
  OrdersDelete: 'orders:delete',
  OrdersAll: 'orders:*',
  PaymentsRead: 'payments:read',
  PaymentsCreate: 'payments:create',
  PaymentsAll: 'payments:*',
  EventsRead: 'events:read',
  UploadsRead: 'uploads:read',
  UploadsCreate: 'uploads:create',
  UploadsDelete: 'uploads:delete',
  UploadsAll: 'uploads:*',
  ApiKeysRead: 'api-keys:read',
  ApiKeysCreate: 'api-keys:create',
  ApiKeysDelete: 'api-keys:delete',
  ApiKeysAll: 'api-keys:*',
} as const;

export type Permission = (typeof Perm)[keyof typeof Perm];

export const RESOURCES = ['users', 'orders', 'payments', 'events', 'uploads', 'api-keys'] as const;
export type Resource = (typeof RESOURCES)[number];

/** Every permission the API's routes declare: the vocabulary roles draw from (this package's README, "Roles"). */
export const PERMISSIONS: readonly Permission[] = Object.freeze([...new Set(Object.values(Perm))]);

/** The built-in roles: the default without a database, and the seed of Portcullis's `roles` table. */
export const ROLE_PERMISSIONS = {
  admin: [
    Perm.UsersAll,
    Perm.OrdersAll,
    Perm.PaymentsAll,
    Perm.EventsRead,
    Perm.UploadsAll,
    Perm.ApiKeysAll,
  ],
  editor: [
    Perm.UsersRead,
    Perm.OrdersRead,
    Perm.OrdersWrite,
    Perm.PaymentsCreate,
    Perm.EventsRead,
    Perm.UploadsAll,
  ],
  viewer: [Perm.UsersRead, Perm.OrdersRead, Perm.EventsRead],
} as const satisfies Record<string, readonly Permission[]>;

export type Role = keyof typeof ROLE_PERMISSIONS;
export const ROLES = Object.keys(ROLE_PERMISSIONS) as Role[];

/** The OAuth scope meaning "every permission my roles give me" (see index.ts). */
export const API_SCOPE = 'api';

/** Every scope of the API: `api` and each permission (the auth server's and the API's metadata). */
export const API_SCOPES: readonly string[] = [API_SCOPE, ...PERMISSIONS];

// Lower-case ASCII only: no case folding or look-alikes can make two spellings of one permission.
const PERMISSION_RE = /^([a-z][a-z0-9-]*):(\*|[a-z][a-z0-9-]*)$/;

interface Parsed {
  resource: string;
  action: string;
}

function parse(permission: unknown): Parsed | undefined {
  if (typeof permission !== 'string' || permission.length > 100) return undefined;
  const m = PERMISSION_RE.exec(permission);
  return m ? { resource: m[1]!, action: m[2]! } : undefined;
}

export function isPermissionString(value: unknown): value is string {
  return parse(value) !== undefined;
}

function isRole(role: string): role is Role {
  return Object.hasOwn(ROLE_PERMISSIONS, role);
}

/** Where roles' permissions come from: ROLE_PERMISSIONS, or a table kept in step (README "Roles"). */
export interface RoleSource {
  /** The role's permissions; undefined for an unknown role, which grants nothing. */
  permissionsOf(role: string): readonly string[] | undefined;
  /** Changes whenever a role changes, so principals built before are built again. */
  readonly version?: number | undefined;
}

/** ROLE_PERMISSIONS as a RoleSource: the default, which needs no database. */
export const STATIC_ROLES: RoleSource = Object.freeze({
  permissionsOf: (role: string) => (isRole(role) ? ROLE_PERMISSIONS[role] : undefined),
});

/** The union of the permissions of the given roles; unknown roles grant nothing. */
export function permissionsForRoles(
  roles: readonly string[],
  source: RoleSource = STATIC_ROLES,
): string[] {
  const out = new Set<string>();
  for (const role of roles) {
    for (const p of source.permissionsOf(role) ?? []) out.add(p);
  }
  return [...out];
}

/** `required` held exactly or by its resource's wildcard; a wildcard `required` only by itself. */
export function hasPermission(granted: readonly string[], required: string): boolean {
  const need = parse(required);
  if (!need) return false;
  const wildcard = `${need.resource}:*`;
  for (const g of granted) {
    if (g === required && parse(g)) return true;
    if (g === wildcard) return true;
  }
  return false;
}

/** Role permissions narrowed by the OAuth scope, never widened (this package's README, "Scope and permissions"). */
export function narrowPermissions(
  rolePermissions: readonly string[],
  scope: readonly string[],
): string[] {
  const granted = rolePermissions.filter(isPermissionString);
  if (scope.includes(API_SCOPE)) return [...new Set(granted)];
  const out = new Set<string>();
  for (const s of scope) {
    const sp = parse(s);
    if (!sp) continue;
    for (const g of granted) {
      const gp = parse(g)!;
      if (gp.resource !== sp.resource) continue;
      if (g === s || gp.action === '*') out.add(s);
      else if (sp.action === '*') out.add(g);
    }
  }
  return [...out];
}

/** Splits an OAuth `scope` claim (RFC 6749 §3.3: space-delimited) into its values. */
export function parseScope(scope: unknown): string[] {
  if (typeof scope !== 'string') return [];
  return [...new Set(scope.split(' ').filter((s) => s.length > 0))];
}

// A permission is `<resource>:<action>` or `<resource>:*` (every action on one resource); no
// global `*`, a typo away from everything. The vocabulary is each service's own (README "Roles").

/** The OAuth scope meaning "every permission my roles give me", where a role table is given. */
export const API_SCOPE = 'api';

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

/** Where roles' permissions come from: a table of the service's own, kept in step (README "Roles"). */
export interface RoleSource {
  /** The role's permissions; undefined for an unknown role, which grants nothing. */
  permissionsOf(role: string): readonly string[] | undefined;
  /** Changes whenever a role changes, so principals built before are built again. */
  readonly version?: number | undefined;
}

/** The union of the permissions of the given roles; unknown roles grant nothing. */
export function permissionsForRoles(roles: readonly string[], source: RoleSource): string[] {
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

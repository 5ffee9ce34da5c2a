import type { AuthorizationDetail } from './authorization-details.js';
import { CLIENT_SUBJECT_PREFIX, type AccessTokenClaims, type Actor } from './claims.js';
import { ForbiddenError } from './errors.js';
import {
  hasPermission,
  isPermissionString,
  narrowPermissions,
  parseScope,
  permissionsForRoles,
  type RoleSource,
} from './permissions.js';

/** Who is calling, however they authenticated. Built only by packages/claims and its resolvers. */
export interface Principal {
  subject: string;
  kind: 'user' | 'client' | 'apiKey';
  roles: string[];
  /** Effective permissions: the scope's, or with a role table its roles' narrowed by the scope. */
  permissions: string[];
  scope: string[];
  authMethod: 'jwt' | 'apiKey' | 'session';
  clientId?: string;
  email?: string;
  tokenId?: string;
  grantId?: string;
  /** Unix seconds. */
  expiresAt?: number;
  /** The user's sign-in, for step-up (step-up.ts): its class, methods and time (Unix seconds). */
  acr?: string;
  amr?: string[];
  authTime?: number;
  /** RFC 8693 `act`: the service calling for `subject` (and those before it), if delegated. */
  actor?: Actor;
  /** RFC 9396: the token's authorization details; they narrow what the permissions allow. */
  authorizationDetails?: AuthorizationDetail[];
}

/** The delegation chain outermost first: the service calling now, then those before it. */
export function actorChain(principal: Pick<Principal, 'actor'>): string[] {
  const chain: string[] = [];
  for (let a = principal.actor; a; a = a.act) chain.push(a.sub);
  return chain;
}

/**
 * Builds the Principal of a verified access token (this package's README, "Scope and
 * permissions"): without `roles`, the permissions are the scope's permission values, which the
 * issuer narrowed to what the subject's roles grant; with `roles`, those roles' permissions
 * narrowed by the scope.
 */
export function principalFromClaims(claims: AccessTokenClaims, roles?: RoleSource): Principal {
  const scope = parseScope(claims.scope);
  const principal: Principal = {
    subject: claims.sub,
    kind: claims.sub.startsWith(CLIENT_SUBJECT_PREFIX) ? 'client' : 'user',
    roles: [...claims.roles],
    permissions: roles
      ? narrowPermissions(permissionsForRoles(claims.roles, roles), scope)
      : scope.filter(isPermissionString),
    scope,
    authMethod: 'jwt',
    clientId: claims.client_id,
    tokenId: claims.jti,
    expiresAt: claims.exp,
  };
  if (claims.email !== undefined) principal.email = claims.email;
  if (claims.grant_id !== undefined) principal.grantId = claims.grant_id;
  if (claims.acr !== undefined) principal.acr = claims.acr;
  if (claims.amr !== undefined) principal.amr = [...claims.amr];
  if (claims.auth_time !== undefined) principal.authTime = claims.auth_time;
  if (claims.act !== undefined) principal.actor = claims.act;
  if (claims.authorization_details !== undefined)
    principal.authorizationDetails = claims.authorization_details;
  return principal;
}

/** Attributes of the resource being acted on (ABAC). */
export interface ResourceAttributes {
  /** The user id owning the resource (e.g. an invoice's owner). */
  ownerId?: string | null | undefined;
}

/** RBAC + ABAC: `permission` held and, for an owned resource, owner or `<resource>:*`. */
export function authorize(
  principal: Principal,
  permission: string,
  resource?: ResourceAttributes,
): boolean {
  if (!hasPermission(principal.permissions, permission)) return false;
  const ownerId = resource?.ownerId;
  if (resource === undefined || !('ownerId' in resource)) return true;
  if (typeof ownerId === 'string' && ownerId.length > 0 && principal.kind !== 'client') {
    if (principal.subject === ownerId) return true;
  }
  const resourceName = permission.slice(0, permission.indexOf(':'));
  return hasPermission(principal.permissions, `${resourceName}:*`);
}

/** `authorize`, throwing ForbiddenError (403 `{"error":"forbidden"}`) when it is false. */
export function requirePermission(
  principal: Principal,
  permission: string,
  resource?: ResourceAttributes,
): void {
  if (!authorize(principal, permission, resource)) throw new ForbiddenError(permission);
}

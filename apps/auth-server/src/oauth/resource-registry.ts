import { API_SCOPE, hasPermission } from '@portcullis/claims';
import { identifierOf, type CatalogResource, type SharedCatalog } from '@portcullis/db';
import { OIDC_SCOPES } from '../kernel/scopes.js';

/** A registered API as the provider sees it: the built-in one answers to API_AUDIENCE. */
export interface RegisteredResource extends CatalogResource {
  identifier: string;
}

/** The registered APIs (docs/roles.md "Resource servers"), read from the shared catalogue. */
export interface ResourceRegistry {
  /** API_AUDIENCE: the built-in API, the target when a request names none. */
  readonly defaultIdentifier: string;
  /** The API with this RFC 8707 identifier; undefined: `invalid_target`. */
  find(identifier: string): RegisteredResource | undefined;
  all(): RegisteredResource[];
  /**
   * The scope values a subject with these roles may hold on the API: `api` and each registered
   * permission its roles grant, directly or by the `<resource>:*` of a role.
   */
  grantable(resource: RegisteredResource, roles: readonly string[]): string[];
  /** Whether some registered API has this permission. */
  isPermission(scope: string): boolean;
  /** Every scope this server knows: the OIDC ones, `api` and each API's permissions. */
  readonly scopes: ReadonlySet<string>;
  /**
   * A token's scope with `api` spelled out: `api` and each permission the roles grant there as
   * they grant it (`uploads:*`, not also each upload action it covers).
   */
  spellOut(scope: string, resource: RegisteredResource, roles: readonly string[]): string;
  /** Catches up with the catalogue (each request, before the provider reads its scopes). */
  refresh(): void;
  /** Keeps this Set (the current provider's supported scopes) equal to `scopes` from now on. */
  follow(target: Set<string>): void;
}

export function createResourceRegistry(
  catalog: Pick<SharedCatalog, 'version' | 'resources' | 'grantsOf'>,
  apiAudience: string,
): ResourceRegistry {
  let seen = -1;
  let byIdentifier = new Map<string, RegisteredResource>();
  let scopes = new Set<string>();
  // The provider's copy of its `scopes` option (internals.ts), changed in place, and the scopes
  // it added itself (its claims' scopes), which stay.
  let followed: { target: Set<string>; own: ReadonlySet<string> } | undefined;

  function copyInto(f: { target: Set<string>; own: ReadonlySet<string> }): void {
    for (const s of f.target) if (!scopes.has(s) && !f.own.has(s)) f.target.delete(s);
    for (const s of scopes) f.target.add(s);
  }

  function current(): Map<string, RegisteredResource> {
    if (catalog.version === seen) return byIdentifier;
    seen = catalog.version;
    byIdentifier = new Map(
      catalog
        .resources()
        .map((r) => ({ ...r, identifier: identifierOf(r, apiAudience) }))
        .filter((r) => r.identifier !== '')
        .map((r) => [r.identifier, r]),
    );
    scopes = new Set([...OIDC_SCOPES, API_SCOPE]);
    for (const r of byIdentifier.values()) for (const p of r.permissions.keys()) scopes.add(p);
    if (followed) copyInto(followed);
    return byIdentifier;
  }
  current();

  return {
    defaultIdentifier: apiAudience,
    find: (identifier) => current().get(identifier),
    isPermission: (scope) => [...current().values()].some((r) => r.permissions.has(scope)),
    all: () => [...current().values()],
    grantable(resource, roles) {
      const granted = roles.flatMap((role) => catalog.grantsOf(role, resource.id) ?? []);
      return [
        API_SCOPE,
        ...[...resource.permissions.keys()].filter((p) => hasPermission(granted, p)),
      ];
    },
    get scopes() {
      current();
      return scopes;
    },
    spellOut(scope, resource, roles) {
      const values = scope.split(' ').filter(Boolean);
      if (!values.includes(API_SCOPE)) return scope;
      const granted = roles
        .flatMap((role) => catalog.grantsOf(role, resource.id) ?? [])
        .filter((p) => resource.permissions.has(p))
        .sort();
      return [...new Set([...values, ...granted])].join(' ');
    },
    refresh: () => void current(),
    follow(target) {
      current();
      followed = { target, own: new Set([...target].filter((s) => !scopes.has(s))) };
      copyInto(followed);
    },
  };
}

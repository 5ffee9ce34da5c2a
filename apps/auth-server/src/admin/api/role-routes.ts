import {
  addFieldError,
  collectZodIssues,
  toFieldErrors,
  type FieldMap,
} from '@portcullis/observability';
import type Router from '@koa/router';
import {
  BUILT_IN_RESOURCE_ID,
  identifierOf,
  ROLE_NAME,
  type ResourceRecord,
  type ResourceStore,
  type RoleGrant,
  type RoleRecord,
  type RoleStore,
  type SharedCatalog,
} from '@portcullis/db';
import { z } from 'zod';
import type { AuditRepo } from '../../data/audit-repo.js';
import { AdminError } from './errors.js';
import { parse } from './parse.js';

export interface RoleAdminDeps {
  roles: RoleStore;
  /** The vocabulary: each resource's registered permissions (resource-routes.ts). */
  resources: Pick<ResourceStore, 'list' | 'get'>;
  audit: AuditRepo;
  /** Synced after each write, so this instance sees it at once. */
  catalog: Pick<SharedCatalog, 'sync'>;
  /** API_AUDIENCE: the built-in resource's identifier. */
  apiAudience: string;
  /** Roles this server hands out by configuration (SIGNUP_ROLES, REGISTRATION_ROLES): never deleted. */
  configuredRoles?: readonly string[] | undefined;
}

const permissionList = z.array(z.string().max(100)).max(500);

/** PUT /admin/roles/:name: the whole set of grants; each permission is checked against its resource. */
const roleSchema = z
  .object({
    /** On the built-in API (this server's own), as before resources were data. */
    permissions: permissionList.optional(),
    grants: z
      .array(z.object({ resource: z.string().max(2000), permissions: permissionList }).strict())
      .max(100)
      .optional(),
    description: z.string().max(200).optional(),
  })
  .strict()
  .refine((b) => b.permissions !== undefined || b.grants !== undefined, {
    message: 'send permissions (on this server’s API), grants (by resource), or both',
    path: ['permissions'],
  });

type RoleInput = z.output<typeof roleSchema>;

/** Resource id -> identifier, the built-in one as API_AUDIENCE. */
type Identifiers = ReadonlyMap<string, string>;

function identifiersOf(resources: readonly ResourceRecord[], apiAudience: string): Identifiers {
  return new Map(resources.map((r) => [r.id, identifierOf(r, apiAudience)]));
}

export const roleView = (r: RoleRecord, identifiers: Identifiers) => ({
  name: r.name,
  description: r.description,
  builtIn: r.builtIn,
  permissions: r.grants.find((g) => g.resourceId === BUILT_IN_RESOURCE_ID)?.permissions ?? [],
  grants: r.grants.map((g) => ({
    resource: identifiers.get(g.resourceId) ?? g.resourceId,
    resourceId: g.resourceId,
    permissions: g.permissions,
  })),
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

/** A role's grants in an audit entry: `{identifier: permissions}`. */
const grantsDetail = (grants: readonly RoleGrant[], identifiers: Identifiers) =>
  Object.fromEntries(
    grants.map((g) => [identifiers.get(g.resourceId) ?? g.resourceId, g.permissions]),
  );

function roleName(name: string): string {
  if (!ROLE_NAME.test(name)) {
    throw new AdminError('validation_failed', 'the request is invalid', {
      name: ['a role name is a lower-case letter, then up to 39 of a-z 0-9 _ -'],
    });
  }
  return name;
}

/** The body's grants by resource id; every unknown resource or permission named at once (422). */
function grantsOf(input: RoleInput, resources: readonly ResourceRecord[], apiAudience: string) {
  const fields: FieldMap = new Map();
  const byIdentifier = new Map(resources.map((r) => [identifierOf(r, apiAudience), r] as const));
  const grants: RoleGrant[] = [];
  const builtIn = resources.find((r) => r.builtIn)!;
  const granted = (field: string, resource: ResourceRecord, permissions: string[]) => {
    const known = new Set(resource.permissions.map((p) => p.name));
    const where = resource.builtIn
      ? 'GET /admin/permissions'
      : `GET /admin/resources/${resource.id}`;
    for (const p of new Set(permissions)) {
      if (!known.has(p))
        addFieldError(fields, field, `unknown permission ${p}: ${where} lists them`);
    }
    grants.push({ resourceId: resource.id, permissions: [...new Set(permissions)] });
  };
  if (input.permissions) granted('permissions', builtIn, input.permissions);
  const named = new Set<string>(input.permissions ? [builtIn.id] : []);
  for (const g of input.grants ?? []) {
    const resource = byIdentifier.get(g.resource);
    if (!resource) {
      addFieldError(
        fields,
        'grants',
        `unknown resource ${g.resource}: GET /admin/resources lists them`,
      );
    } else if (named.has(resource.id)) {
      addFieldError(
        fields,
        'grants',
        `${g.resource} is named twice (permissions are the built-in API's)`,
      );
    } else {
      named.add(resource.id);
      granted('grants', resource, g.permissions);
    }
  }
  if (fields.size > 0) {
    throw new AdminError('validation_failed', 'the request is invalid', toFieldErrors(fields));
  }
  return grants.filter((g) => g.permissions.length > 0);
}

/** `parse`, and the body's `roles` must be roles of the table: every problem named at once (422). */
export async function parseWithRoles<S extends z.ZodType>(
  schema: S,
  input: unknown,
  roles: Pick<RoleStore, 'unknown'>,
): Promise<z.output<S>> {
  const result = schema.safeParse(input ?? {});
  const fields: FieldMap = new Map();
  if (!result.success) collectZodIssues(fields, result.error, { topLevel: true });
  const named = (input as { roles?: unknown } | null | undefined)?.roles;
  const names = Array.isArray(named)
    ? named.filter((r): r is string => typeof r === 'string' && ROLE_NAME.test(r))
    : [];
  const unknown = names.length > 0 ? await roles.unknown(names) : [];
  if (unknown.length > 0) {
    for (const r of unknown)
      addFieldError(fields, 'roles', `unknown role ${r}: GET /admin/roles lists them`);
  }
  if (!result.success || unknown.length > 0) {
    throw new AdminError('validation_failed', 'the request is invalid', toFieldErrors(fields));
  }
  return result.data;
}

/** A permission or resource deleted between the check and the write (SQLSTATE 23503). */
const isForeignKeyViolation = (error: unknown) =>
  (error as { code?: unknown } | null)?.code === '23503';

/** Roles and what they grant on each resource, as data (docs/roles.md); every change audited. */
export function roleRoutes(router: Router, deps: RoleAdminDeps): void {
  const identifiers = async () => identifiersOf(await deps.resources.list(), deps.apiAudience);

  router.get('/admin/permissions', async function listPermissions(ctx) {
    const builtIn = await deps.resources.get(BUILT_IN_RESOURCE_ID);
    ctx.body = { items: (builtIn?.permissions ?? []).map((p) => p.name) };
  });

  router.get('/admin/roles', async function listRoles(ctx) {
    const [roles, ids] = await Promise.all([deps.roles.list(), identifiers()]);
    ctx.body = { items: roles.map((r) => roleView(r, ids)) };
  });

  // No query for a name no role can have.
  async function found(name: string): Promise<RoleRecord> {
    const role = ROLE_NAME.test(name) ? await deps.roles.get(name) : undefined;
    if (!role) throw new AdminError('not_found', 'no such role');
    return role;
  }

  router.get('/admin/roles/:name', async function showRole(ctx) {
    const [role, ids] = await Promise.all([found(ctx.params['name']!), identifiers()]);
    ctx.body = roleView(role, ids);
  });

  router.put('/admin/roles/:name', async function putRole(ctx) {
    const name = roleName(ctx.params['name']!);
    const input = parse(roleSchema, ctx.request.body);
    const resources = await deps.resources.list();
    const grants = grantsOf(input, resources, deps.apiAudience);
    let put;
    try {
      put = await deps.roles.put(name, { grants, description: input.description });
    } catch (error) {
      if (!isForeignKeyViolation(error)) throw error;
      throw new AdminError('conflict', 'a resource or permission was removed meanwhile: try again');
    }
    const { role, created, before } = put;
    await deps.catalog.sync();
    const ids = identifiersOf(resources, deps.apiAudience);
    await deps.audit.record(
      created
        ? { kind: 'role_created', detail: { role: name, grants: grantsDetail(role.grants, ids) } }
        : {
            kind: 'role_updated',
            detail: {
              role: name,
              from: grantsDetail(before!.grants, ids),
              to: grantsDetail(role.grants, ids),
              ...(before!.description === role.description
                ? {}
                : { description: role.description }),
            },
          },
    );
    ctx.status = created ? 201 : 200;
    if (created) ctx.set('Location', `/admin/roles/${encodeURIComponent(name)}`);
    ctx.body = roleView(role, ids);
  });

  router.delete('/admin/roles/:name', async function deleteRole(ctx) {
    const name = ctx.params['name']!;
    const role = await found(name);
    if (role.builtIn) throw new AdminError('conflict', `${name} is a built-in role: change it`);
    if (deps.configuredRoles?.includes(name)) {
      throw new AdminError('conflict', `${name} is in SIGNUP_ROLES or REGISTRATION_ROLES`);
    }
    const { users, clients } = await deps.roles.holders(name);
    if (users > 0 || clients > 0) {
      throw new AdminError(
        'conflict',
        `${name} is held by ${users} user(s) and ${clients} client(s): take it from them first`,
      );
    }
    const deleted = await deps.roles.delete(name);
    if (!deleted) throw new AdminError('not_found', 'no such role');
    await deps.catalog.sync();
    await deps.audit.record({
      kind: 'role_deleted',
      detail: { role: name, grants: grantsDetail(deleted.grants, await identifiers()) },
    });
    ctx.status = 204;
  });
}

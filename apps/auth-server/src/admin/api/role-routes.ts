import {
  addFieldError,
  collectZodIssues,
  toFieldErrors,
  type FieldMap,
} from '@portcullis/observability';
import type Router from '@koa/router';
import { PERMISSIONS } from '@portcullis/claims';
import { ROLE_NAME, type RoleRecord, type RoleStore } from '@portcullis/db';
import { z } from 'zod';
import type { AuditRepo } from '../../data/audit-repo.js';
import { AdminError } from './errors.js';
import { parse } from './parse.js';

export interface RoleAdminDeps {
  roles: RoleStore;
  audit: AuditRepo;
  /** Roles this server hands out by configuration (SIGNUP_ROLES, REGISTRATION_ROLES): never deleted. */
  configuredRoles?: readonly string[] | undefined;
}

const vocabulary = new Set<string>(PERMISSIONS);

/** PUT /admin/roles/:name: the whole set of permissions, each from the vocabulary. */
const roleSchema = z
  .object({
    permissions: z
      .array(z.string().max(100))
      .max(PERMISSIONS.length)
      .superRefine((permissions, ctx) => {
        for (const p of permissions) {
          if (!vocabulary.has(p)) {
            ctx.addIssue({
              code: 'custom',
              message: `unknown permission ${p}: GET /admin/permissions lists them`,
            });
          }
        }
      }),
    description: z.string().max(200).optional(),
  })
  .strict();

export const roleView = (r: RoleRecord) => ({
  name: r.name,
  permissions: r.permissions,
  description: r.description,
  builtIn: r.builtIn,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

function roleName(name: string): string {
  if (!ROLE_NAME.test(name)) {
    throw new AdminError('validation_failed', 'the request is invalid', {
      name: ['a role name is a lower-case letter, then up to 39 of a-z 0-9 _ -'],
    });
  }
  return name;
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

/** Roles and the permissions they grant, as data (docs/roles.md); every change audited. */
export function roleRoutes(router: Router, deps: RoleAdminDeps): void {
  router.get('/admin/permissions', function listPermissions(ctx) {
    ctx.body = { items: PERMISSIONS };
  });

  router.get('/admin/roles', async function listRoles(ctx) {
    ctx.body = { items: (await deps.roles.list()).map(roleView) };
  });

  // No query for a name no role can have.
  async function found(name: string): Promise<RoleRecord> {
    const role = ROLE_NAME.test(name) ? await deps.roles.get(name) : undefined;
    if (!role) throw new AdminError('not_found', 'no such role');
    return role;
  }

  router.get('/admin/roles/:name', async function showRole(ctx) {
    ctx.body = roleView(await found(ctx.params['name']!));
  });

  router.put('/admin/roles/:name', async function putRole(ctx) {
    const name = roleName(ctx.params['name']!);
    const input = parse(roleSchema, ctx.request.body);
    const { role, created, before } = await deps.roles.put(name, input);
    await deps.audit.record(
      created
        ? { kind: 'role_created', detail: { role: name, permissions: role.permissions } }
        : {
            kind: 'role_updated',
            detail: {
              role: name,
              from: before!.permissions,
              to: role.permissions,
              ...(before!.description === role.description
                ? {}
                : { description: role.description }),
            },
          },
    );
    ctx.status = created ? 201 : 200;
    if (created) ctx.set('Location', `/admin/roles/${encodeURIComponent(name)}`);
    ctx.body = roleView(role);
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
    await deps.audit.record({
      kind: 'role_deleted',
      detail: { role: name, permissions: deleted.permissions },
    });
    ctx.status = 204;
  });
}

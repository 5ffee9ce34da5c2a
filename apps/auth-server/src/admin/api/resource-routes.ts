import type Router from '@koa/router';
import {
  identifierOf,
  PERMISSION_NAME,
  type ResourceRecord,
  type ResourceStore,
  type SharedCatalog,
} from '@portcullis/db';
import { z } from 'zod';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { KeyAlg } from '../../data/signing-keys-repo.js';
import { LOOPBACK_HOSTS } from '../../oauth/loopback.js';
import { AdminError } from './errors.js';
import { parse } from './parse.js';

export interface ResourceAdminDeps {
  resources: ResourceStore;
  audit: AuditRepo;
  /** Synced after each write, so this instance's token endpoint sees it at once. */
  catalog: Pick<SharedCatalog, 'sync'>;
  /** API_AUDIENCE: the built-in API's identifier, taken by no other resource. */
  apiAudience: string;
}

/** What the key manager can sign with (oauth/keys.ts); null means the newest signing key. */
export const RESOURCE_SIGNING_ALGS = ['RS256', 'ES256'] as const satisfies readonly KeyAlg[];

/** Why a resource identifier is refused (RFC 8707 §2: an absolute URI without a fragment). */
export function identifierProblem(identifier: string): string | undefined {
  // No spaces, controls or backslashes, which the URL parser would silently rewrite.
  if (!/^[\x21-\x5b\x5d-\x7e]+$/.test(identifier) || !/^https?:\/\//i.test(identifier)) {
    return 'an absolute http(s) URL (https://api.example.com)';
  }
  const url = URL.parse(identifier);
  if (!url) return 'an absolute http(s) URL (https://api.example.com)';
  if (identifier.includes('#')) return 'no fragment (RFC 8707 §2)';
  if (url.protocol === 'https:') return undefined;
  if (LOOPBACK_HOSTS.has(url.hostname) || url.hostname.endsWith('.test')) return undefined;
  return 'https; http only for localhost, 127.0.0.1, [::1] or a .test host';
}

const identifier = z
  .string()
  .max(2000)
  .superRefine((value, ctx) => {
    const problem = identifierProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const name = z
  .string()
  .min(1)
  .max(100)
  .refine((s) => s.trim() !== '', 'must not be blank');

const permissionName = z
  .string()
  .max(81)
  .regex(PERMISSION_NAME, 'a permission is <resource>:<action> or <resource>:* (orders:read)');

const description = z.string().max(200);

const settings = {
  accessTokenTtl: z.number().int().min(60).max(3600).nullable().optional(),
  signingAlg: z.enum(RESOURCE_SIGNING_ALGS).nullable().optional(),
  dpopRequired: z.boolean().optional(),
  followsDenyList: z.boolean().optional(),
};

/** POST /admin/resources. */
const newResourceSchema = z
  .object({
    identifier,
    name,
    permissions: z
      .array(z.object({ name: permissionName, description: description.optional() }).strict())
      .max(200)
      .superRefine((permissions, ctx) => {
        const seen = new Set<string>();
        for (const p of permissions) {
          if (seen.has(p.name)) ctx.addIssue({ code: 'custom', message: `${p.name} given twice` });
          seen.add(p.name);
        }
      })
      .optional(),
    ...settings,
  })
  .strict();

/** PATCH /admin/resources/:id: what is given changes; null restores a server default. */
const resourcePatchSchema = z
  .object({ identifier: identifier.optional(), name: name.optional(), ...settings })
  .strict()
  .refine((p) => Object.keys(p).length > 0, 'name at least one member to change');

/** PUT /admin/resources/:id/permissions/:name. */
const permissionSchema = z.object({ description: description.optional() }).strict();

/** A resource as the admin API answers it (the console and the CLI read it; JSON dates as strings). */
export interface ResourceView extends Omit<
  ResourceRecord,
  'identifier' | 'createdAt' | 'updatedAt'
> {
  /** The built-in one's is this server's API_AUDIENCE. */
  identifier: string;
}

/** A resource as the admin API shows it: the built-in one by this server's API_AUDIENCE. */
export const resourceView = (
  r: ResourceRecord,
  apiAudience: string,
): ResourceView & Pick<ResourceRecord, 'createdAt' | 'updatedAt'> => ({
  id: r.id,
  identifier: identifierOf(r, apiAudience),
  name: r.name,
  accessTokenTtl: r.accessTokenTtl,
  signingAlg: r.signingAlg,
  dpopRequired: r.dpopRequired,
  followsDenyList: r.followsDenyList,
  builtIn: r.builtIn,
  permissions: r.permissions,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

const SETTINGS = [
  'identifier',
  'name',
  'accessTokenTtl',
  'signingAlg',
  'dpopRequired',
  'followsDenyList',
] as const;

/** The settings that differ, each side: what a resource_updated audit names. */
function changed(before: ResourceRecord, after: ResourceRecord) {
  const from: Record<string, unknown> = {};
  const to: Record<string, unknown> = {};
  for (const key of SETTINGS) {
    if (before[key] === after[key]) continue;
    from[key] = before[key];
    to[key] = after[key];
  }
  return { from, to };
}

/** Resource servers and their permissions as data (docs/roles.md); every change audited. */
export function resourceRoutes(router: Router, deps: ResourceAdminDeps): void {
  const view = (r: ResourceRecord) => resourceView(r, deps.apiAudience);
  const identifierIn = (r: ResourceRecord) => identifierOf(r, deps.apiAudience);

  async function found(id: string): Promise<ResourceRecord> {
    const resource = await deps.resources.get(id);
    if (!resource) throw new AdminError('not_found', 'no such resource');
    return resource;
  }

  function notTheBuiltIn(value: string): void {
    if (value === deps.apiAudience) {
      throw new AdminError(
        'conflict',
        `${value} is this server's API_AUDIENCE: the built-in resource has it`,
      );
    }
  }

  router.get('/admin/resources', async function listResources(ctx) {
    ctx.body = { items: (await deps.resources.list()).map(view) };
  });

  router.get('/admin/resources/:id', async function showResource(ctx) {
    ctx.body = view(await found(ctx.params['id']!));
  });

  router.post('/admin/resources', async function createResource(ctx) {
    const input = parse(newResourceSchema, ctx.request.body);
    notTheBuiltIn(input.identifier);
    const permissions = (input.permissions ?? []).map((p) => ({
      name: p.name,
      description: p.description ?? '',
    }));
    const resource = await deps.resources.create({ ...input, permissions });
    if (!resource) throw new AdminError('conflict', `${input.identifier} is registered already`);
    await deps.catalog.sync();
    await deps.audit.record({
      kind: 'resource_created',
      detail: { resource: resource.identifier, permissions: permissions.map((p) => p.name) },
    });
    ctx.status = 201;
    ctx.set('Location', `/admin/resources/${resource.id}`);
    ctx.body = view(resource);
  });

  router.patch('/admin/resources/:id', async function patchResource(ctx) {
    const id = ctx.params['id']!;
    const patch = parse(resourcePatchSchema, ctx.request.body);
    if (patch.identifier !== undefined) {
      // The built-in API's identifier is API_AUDIENCE, set by configuration.
      if ((await found(id)).builtIn) {
        throw new AdminError('validation_failed', 'the request is invalid', {
          identifier: ['the built-in resource is API_AUDIENCE: change it in the configuration'],
        });
      }
      notTheBuiltIn(patch.identifier);
    }
    const result = await deps.resources.update(id, patch);
    if (!result) throw new AdminError('not_found', 'no such resource');
    if (result === 'conflict') {
      throw new AdminError('conflict', `${patch.identifier} is registered already`);
    }
    await deps.catalog.sync();
    await deps.audit.record({
      kind: 'resource_updated',
      detail: { resource: identifierIn(result.after), ...changed(result.before, result.after) },
    });
    ctx.body = view(result.after);
  });

  router.delete('/admin/resources/:id', async function deleteResource(ctx) {
    const resource = await found(ctx.params['id']!);
    if (resource.builtIn) {
      throw new AdminError('conflict', 'the built-in resource is this server’s own API');
    }
    const deleted = await deps.resources.delete(resource.id);
    if (!deleted) throw new AdminError('not_found', 'no such resource');
    await deps.catalog.sync();
    await deps.audit.record({
      kind: 'resource_deleted',
      detail: { resource: resource.identifier, roles: deleted.roles },
    });
    ctx.status = 204;
  });

  router.put('/admin/resources/:id/permissions/:name', async function putPermission(ctx) {
    const permission = ctx.params['name']!;
    if (!PERMISSION_NAME.test(permission)) {
      throw new AdminError('validation_failed', 'the request is invalid', {
        name: ['a permission is <resource>:<action> or <resource>:* (orders:read)'],
      });
    }
    const input = parse(permissionSchema, ctx.request.body);
    const resource = await found(ctx.params['id']!);
    // Without a description, one it has stays.
    const kept = resource.permissions.find((p) => p.name === permission)?.description;
    const text = input.description ?? kept ?? '';
    const put = await deps.resources.putPermission(resource.id, {
      name: permission,
      description: text,
    });
    if (!put) throw new AdminError('not_found', 'no such resource');
    await deps.catalog.sync();
    await deps.audit.record({
      kind: put.created ? 'permission_created' : 'permission_updated',
      detail: { resource: identifierIn(resource), permission, description: text },
    });
    ctx.status = put.created ? 201 : 200;
    ctx.body = view(await found(resource.id));
  });

  router.delete('/admin/resources/:id/permissions/:name', async function deletePermission(ctx) {
    const permission = ctx.params['name']!;
    const resource = await found(ctx.params['id']!);
    const missing = () =>
      new AdminError('not_found', `no permission ${permission} on this resource`);
    if (!resource.permissions.some((p) => p.name === permission)) throw missing();
    const deleted = await deps.resources.deletePermission(resource.id, permission);
    if (!deleted) throw missing();
    await deps.catalog.sync();
    await deps.audit.record({
      kind: 'permission_deleted',
      detail: { resource: identifierIn(resource), permission, roles: deleted.roles },
    });
    ctx.status = 204;
  });
}

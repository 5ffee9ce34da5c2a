import { ACR, hasPermission, isPermissionString, type Principal } from '@portcullis/claims';
import { noticeOfRevocation } from '../auth/credentials.js';
import type { ApiKey } from '../data/api-keys-repo.js';
import type { ApiConfig } from '../config.js';
import { ForbiddenError, NotFoundError, ValidationError, type FieldErrors } from '../errors.js';
import { createCursorCodec } from '../http/cursor.js';
import { principalOf } from '../middleware/authenticate.js';
import { defineRoute, type ApiRouter } from '../openapi/define-route.js';
import { CursorPageQuery, IdParams } from '../schemas/common.js';
import {
  ApiKeyPageSchema,
  ApiKeySchema,
  CreateApiKeyBody,
  CreatedApiKeySchema,
} from '../schemas/credentials.js';
import type { RouteDeps } from './deps.js';
import { Perm, RESOURCES } from '../permissions.js';

const tags = ['api-keys'];
const RESOURCE_NAMES: readonly string[] = RESOURCES;

function apiKeyJson(key: ApiKey) {
  return {
    id: key.id,
    name: key.name,
    permissions: key.permissions,
    createdAt: key.createdAt.toISOString(),
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revoked: key.revoked,
    revokedAt: key.revokedAt?.toISOString() ?? null,
    rateLimit: key.rateLimit,
  };
}

/** Only a human owner manages keys: a key cannot mint siblings that outlive its own revocation. */
function requireKeyOwner(principal: Principal): string {
  if (principal.kind !== 'user') throw new ForbiddenError('API keys are managed by users');
  return principal.subject;
}

/** A key may hold only what its creator holds right now (never widen), named resources only. */
function permissionProblems(requested: readonly string[], creator: Principal): string[] {
  const problems: string[] = [];
  for (const p of requested) {
    if (!isPermissionString(p) || !RESOURCE_NAMES.includes(p.slice(0, p.indexOf(':')))) {
      problems.push(`unknown permission: ${p}`);
    } else if (!hasPermission(creator.permissions, p)) {
      problems.push(`not a permission of the caller: ${p}`);
    }
  }
  return problems;
}

export function apiKeyRoutes(api: ApiRouter, deps: RouteDeps, config: ApiConfig): void {
  const { apiKeys } = deps.repos;
  const cursors = createCursorCodec(() => deps.repos.secrets.get('cursor-hmac'), 'api-keys');
  const defaultLimit = config.rateLimits.apiKey.points;

  defineRoute(
    api,
    {
      method: 'post',
      path: '/api-keys',
      operationId: 'createApiKey',
      summary: 'Create an API key (the key is in this response only)',
      tags,
      permission: Perm.ApiKeysCreate,
      stepUp: { acr: ACR.mfa, maxAgeSec: api.stepUp.maxAgeSec },
      request: { body: CreateApiKeyBody },
      responses: {
        201: {
          description: 'Created',
          content: { 'application/json': { schema: CreatedApiKeySchema } },
        },
      },
    },
    async function createApiKey(ctx, { body }) {
      const principal = principalOf(ctx);
      const ownerId = requireKeyOwner(principal);
      const fields: FieldErrors = {};
      const problems = permissionProblems(body.permissions, principal);
      if (problems.length > 0) fields['permissions'] = problems;
      if (body.rateLimit !== undefined && body.rateLimit > defaultLimit) {
        fields['rateLimit'] = [`at most ${defaultLimit} (a key's limit can only be lowered)`];
      }
      if (Object.keys(fields).length > 0) throw new ValidationError(fields);
      const { apiKey, key } = await apiKeys.create({
        ownerId,
        name: body.name,
        permissions: [...new Set(body.permissions)],
        rateLimit: body.rateLimit,
        now: deps.clock(),
      });
      ctx.status = 201;
      ctx.set('Location', `/api-keys/${apiKey.id}`);
      ctx.body = { ...apiKeyJson(apiKey), key };
    },
  );

  defineRoute(
    api,
    {
      method: 'get',
      path: '/api-keys',
      operationId: 'listApiKeys',
      summary: 'List the caller’s API keys (never the key or its hash)',
      tags,
      permission: Perm.ApiKeysRead,
      request: { query: CursorPageQuery },
      responses: {
        200: {
          description: 'A page of keys',
          content: { 'application/json': { schema: ApiKeyPageSchema } },
        },
        400: { description: 'Tampered or foreign cursor (`invalid_cursor`)' },
      },
    },
    async function listApiKeys(ctx, { query }) {
      const ownerId = requireKeyOwner(principalOf(ctx));
      const after = query.after === undefined ? undefined : (await cursors.decode(query.after)).id;
      const rows = await apiKeys.listByOwner(ownerId, { after, limit: query.limit + 1 });
      const items = rows.slice(0, query.limit);
      const last = items.at(-1);
      const nextCursor =
        rows.length > query.limit && last ? await cursors.encode({ id: last.id }) : null;
      ctx.body = { items: items.map(apiKeyJson), nextCursor };
    },
  );

  defineRoute(
    api,
    {
      method: 'get',
      path: '/api-keys/:id',
      operationId: 'getApiKey',
      summary: 'Get one of the caller’s API keys',
      tags,
      permission: Perm.ApiKeysRead,
      request: { params: IdParams },
      responses: {
        200: {
          description: 'The key record',
          content: { 'application/json': { schema: ApiKeySchema } },
        },
      },
    },
    async function getApiKey(ctx, { params }) {
      const ownerId = requireKeyOwner(principalOf(ctx));
      const key = await apiKeys.findForOwner(params.id, ownerId);
      if (!key) throw new NotFoundError();
      ctx.body = apiKeyJson(key);
    },
  );

  defineRoute(
    api,
    {
      method: 'delete',
      path: '/api-keys/:id',
      operationId: 'revokeApiKey',
      summary: 'Revoke an API key, effective on its next request',
      tags,
      permission: Perm.ApiKeysDelete,
      request: { params: IdParams },
      responses: { 204: { description: 'Revoked (also when it already was)' } },
    },
    async function revokeApiKey(ctx, { params }) {
      const ownerId = requireKeyOwner(principalOf(ctx));
      // Someone else's key answers like a missing one: 404, so ids cannot be probed.
      const now = deps.clock();
      if (!(await apiKeys.revoke(params.id, ownerId, now))) throw new NotFoundError();
      if (deps.credentials) await noticeOfRevocation(deps.credentials.revocations, params.id, now);
      ctx.status = 204;
    },
  );
}

import type { User } from '@portcullis/accounts';
import { ACR } from '@portcullis/claims';
import { NotFoundError } from '../errors.js';
import { sendCacheable } from '../http/conditional.js';
import { defineRoute, type ApiRouter } from '../openapi/define-route.js';
import { z } from '../openapi/zod.js';
import { CursorPageQuery, etagHeader, IfNoneMatchHeaders } from '../schemas/common.js';
import { UserIdParams, UserPageSchema, UserSchema } from '../schemas/users.js';
import type { RouteDeps } from './deps.js';
import { Perm } from '../permissions.js';

const tags = ['users'];

// packages/accounts' User has no password hash; listing fields keeps it that way if
// the type ever grows.
function userJson(user: User) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    roles: user.roles,
    createdAt: user.createdAt.toISOString(),
    updatedAt: user.updatedAt.toISOString(),
  };
}

export function usersRoutes(api: ApiRouter, deps: RouteDeps): void {
  const { accounts } = deps.repos;

  defineRoute(
    api,
    {
      method: 'get',
      path: '/users',
      operationId: 'listUsers',
      summary: 'List users (cursor pagination)',
      tags,
      permission: Perm.UsersRead,
      request: { query: CursorPageQuery },
      responses: {
        200: {
          description: 'A page of users',
          content: { 'application/json': { schema: UserPageSchema } },
        },
        400: { description: 'Tampered or foreign cursor (`invalid_cursor`)' },
      },
    },
    async function listUsers(ctx, { query }) {
      const after =
        query.after === undefined ? undefined : (await deps.userCursors.decode(query.after)).id;
      // One extra row tells whether a next page exists without a count query.
      const rows = await accounts.list({ after, limit: query.limit + 1 });
      const items = rows.slice(0, query.limit);
      const last = items.at(-1);
      const nextCursor =
        rows.length > query.limit && last ? await deps.userCursors.encode({ id: last.id }) : null;
      ctx.body = { items: items.map(userJson), nextCursor };
    },
  );

  defineRoute(
    api,
    {
      method: 'get',
      path: '/users/:id',
      operationId: 'getUser',
      summary: 'Get one user',
      tags,
      permission: Perm.UsersRead,
      request: { params: UserIdParams, headers: IfNoneMatchHeaders },
      responses: {
        200: {
          description: 'The user',
          headers: z.object(etagHeader),
          content: { 'application/json': { schema: UserSchema } },
        },
        304: { description: 'Not modified' },
      },
    },
    async function getUser(ctx, { params }) {
      // A disabled account is still a user of the directory, as the list shows it.
      const user = await accounts.get(params.id);
      if (!user) throw new NotFoundError();
      sendCacheable(ctx, userJson(user));
    },
  );

  defineRoute(
    api,
    {
      method: 'delete',
      path: '/users/:id',
      operationId: 'deleteUser',
      summary: 'Delete a user (users:delete)',
      tags,
      permission: Perm.UsersDelete,
      stepUp: { acr: ACR.mfa, maxAgeSec: api.stepUp.maxAgeSec },
      request: { params: UserIdParams },
      responses: { 204: { description: 'Deleted' } },
    },
    async function deleteUser(ctx, { params }) {
      if (!(await accounts.delete(params.id))) throw new NotFoundError();
      ctx.status = 204;
    },
  );
}

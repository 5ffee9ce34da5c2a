import { assertEditable } from '../domain/order-status.js';
import { ConflictError, PreconditionFailedError } from '../errors.js';
import { checkIfMatch, sendCacheable, strongEtag } from '../http/conditional.js';
import { principalOf } from '../middleware/authenticate.js';
import { defineRoute, type ApiRouter } from '../openapi/define-route.js';
import { etagHeader, IdParams, IfMatchHeaders, IfNoneMatchHeaders } from '../schemas/common.js';
import {
  CreateOrderBody,
  ListOrdersQuery,
  OrderPageSchema,
  OrderSchema,
  PatchOrderBody,
  ReplaceOrderBody,
} from '../schemas/orders.js';
import { z } from '../openapi/zod.js';
import type { RouteDeps } from './deps.js';
import {
  loadOrderFor,
  requireOrderPermission,
  orderJson,
  representationOf,
  visibilityOf,
  writeOrder,
} from './order-access.js';
import { Perm } from '../permissions.js';

const tags = ['orders'];
const orderResponse = (description: string) => ({
  description,
  headers: z.object(etagHeader),
  content: { 'application/json': { schema: OrderSchema } },
});
const conflict = {
  description: 'State conflict or stale `version` (`order_closed`, `version_conflict`)',
};
const stale = { description: 'If-Match is stale: nothing was written' };

export function ordersRoutes(api: ApiRouter, deps: RouteDeps): void {
  const { orders } = deps.repos;

  defineRoute(
    api,
    {
      method: 'get',
      path: '/orders',
      operationId: 'listOrders',
      summary: 'List orders (admins: all; others: their own)',
      tags,
      permission: Perm.OrdersRead,
      request: { query: ListOrdersQuery },
      responses: {
        200: {
          description: 'A page of orders',
          content: { 'application/json': { schema: OrderPageSchema } },
        },
      },
    },
    async function listOrders(ctx, { query }) {
      const principal = principalOf(ctx);
      const { items, total } = await orders.list(
        {
          ...visibilityOf(principal),
          statuses: query.status,
          customer: query.customer,
          createdAfter: query.createdAfter,
        },
        { offset: (query.page - 1) * query.limit, limit: query.limit },
      );
      ctx.body = { items: items.map(orderJson), total, page: query.page, limit: query.limit };
    },
  );

  defineRoute(
    api,
    {
      method: 'get',
      path: '/orders/:id',
      operationId: 'getOrder',
      summary: 'Get one order (ETag, If-None-Match -> 304)',
      tags,
      permission: Perm.OrdersRead,
      request: { params: IdParams, headers: IfNoneMatchHeaders },
      responses: { 200: orderResponse('The order'), 304: { description: 'Not modified' } },
    },
    async function getOrder(ctx, { params, permission }) {
      const order = await loadOrderFor(deps, principalOf(ctx), params.id, permission, {
        recent: true,
      });
      const { body, etag } = representationOf(order);
      sendCacheable(ctx, body, etag);
    },
  );

  defineRoute(
    api,
    {
      method: 'post',
      path: '/orders',
      operationId: 'createOrder',
      summary: 'Create an order (status pending, owned by the caller)',
      tags,
      permission: Perm.OrdersWrite,
      request: { body: CreateOrderBody },
      responses: {
        201: {
          ...orderResponse('Created'),
          headers: z.object({ ...etagHeader, Location: z.string() }),
        },
      },
    },
    async function createOrder(ctx, { body, permission }) {
      const principal = principalOf(ctx);
      // The new order will be the caller's: the same owner rule as any later change, so a
      // client-credentials caller (never an owner) needs orders:* to create one.
      requireOrderPermission(principal, permission, principal.subject);
      const order = orderJson(await orders.create(principal.subject, body, deps.clock()));
      ctx.status = 201;
      ctx.set('Location', `/orders/${order.id}`);
      ctx.set('ETag', strongEtag(order));
      ctx.body = order;
    },
  );

  defineRoute(
    api,
    {
      method: 'put',
      path: '/orders/:id',
      operationId: 'replaceOrder',
      summary: 'Replace an order’s content (omitted optional fields are removed)',
      tags,
      permission: Perm.OrdersWrite,
      request: { params: IdParams, headers: IfMatchHeaders, body: ReplaceOrderBody },
      responses: { 200: orderResponse('The updated order'), 409: conflict, 412: stale },
    },
    async function replaceOrder(ctx, { params, body, permission }) {
      const order = await loadOrderFor(deps, principalOf(ctx), params.id, permission);
      const { version, ...content } = body;
      await writeOrder(
        ctx,
        deps,
        order,
        { ...content, items: content.items ?? null, note: content.note ?? null },
        {
          bodyVersion: version,
          check: () => assertEditable(order.status),
        },
      );
    },
  );

  defineRoute(
    api,
    {
      method: 'patch',
      path: '/orders/:id',
      operationId: 'updateOrder',
      summary: 'Change some fields (JSON merge patch: null removes items or note)',
      tags,
      permission: Perm.OrdersWrite,
      request: { params: IdParams, headers: IfMatchHeaders, body: PatchOrderBody },
      responses: { 200: orderResponse('The updated order'), 409: conflict, 412: stale },
    },
    async function updateOrder(ctx, { params, body, permission }) {
      const order = await loadOrderFor(deps, principalOf(ctx), params.id, permission);
      const { version, ...changes } = body;
      await writeOrder(ctx, deps, order, changes, {
        bodyVersion: version,
        check: () => assertEditable(order.status),
      });
    },
  );

  defineRoute(
    api,
    {
      method: 'delete',
      path: '/orders/:id',
      operationId: 'deleteOrder',
      summary: 'Delete an order (orders:delete, i.e. admins)',
      tags,
      permission: Perm.OrdersDelete,
      request: { params: IdParams, headers: IfMatchHeaders },
      responses: {
        204: { description: 'Deleted' },
        409: { description: 'Changed concurrently' },
        412: stale,
      },
    },
    async function deleteOrder(ctx, { params, permission }) {
      const order = await loadOrderFor(deps, principalOf(ctx), params.id, permission);
      const conditional = checkIfMatch(ctx, orderJson(order));
      if (!(await orders.delete(order.id, order.version))) {
        if (conditional) throw new PreconditionFailedError();
        throw new ConflictError(
          'conflict',
          'the order was changed concurrently; fetch it and retry',
        );
      }
      ctx.status = 204;
    },
  );
}

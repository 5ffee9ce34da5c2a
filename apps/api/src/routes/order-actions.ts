import { assertTransition, type OrderStatus } from '../domain/order-status.js';
import { principalOf } from '../middleware/authenticate.js';
import { defineRoute, type ApiRouter } from '../openapi/define-route.js';
import { IdParams, IfMatchHeaders } from '../schemas/common.js';
import { OrderSchema } from '../schemas/orders.js';
import type { RouteDeps } from './deps.js';
import { loadOrderFor, writeOrder } from './order-access.js';
import { Perm, type Permission } from '../permissions.js';

/** Status changes happen only through these actions (see domain/order-status.ts). */
const ACTIONS: ReadonlyArray<{
  name: string;
  to: OrderStatus;
  permission: Permission;
  summary: string;
}> = [
  {
    name: 'cancel',
    to: 'cancelled',
    permission: Perm.OrdersWrite,
    summary: 'Cancel a pending or open order',
  },
  {
    name: 'confirm',
    to: 'open',
    permission: Perm.OrdersWrite,
    summary: 'Confirm a pending order (-> open)',
  },
  // Fulfilment is the merchant's act, not the customer's: admins only.
  {
    name: 'fulfill',
    to: 'fulfilled',
    permission: Perm.OrdersAll,
    summary: 'Mark an open order fulfilled (admins)',
  },
];

export function orderActionRoutes(api: ApiRouter, deps: RouteDeps): void {
  for (const action of ACTIONS) {
    defineRoute(
      api,
      {
        method: 'post',
        path: `/orders/:id/${action.name}`,
        operationId: `${action.name}Order`,
        summary: action.summary,
        tags: ['orders'],
        permission: action.permission,
        request: { params: IdParams, headers: IfMatchHeaders },
        responses: {
          200: {
            description: 'The order after the transition',
            content: { 'application/json': { schema: OrderSchema } },
          },
          409: { description: 'Not allowed from the current status (`invalid_transition`)' },
          412: { description: 'If-Match is stale: nothing was written' },
        },
      },
      async function transitionOrder(ctx, { params, permission }) {
        const order = await loadOrderFor(deps, principalOf(ctx), params.id, permission);
        await writeOrder(
          ctx,
          deps,
          order,
          { status: action.to },
          { check: () => assertTransition(order.status, action.to) },
        );
      },
    );
  }
}

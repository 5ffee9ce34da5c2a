import type { ParameterizedContext } from 'koa';
import { hasPermission, requirePermission, type Principal } from '@portcullis/claims';
import type { Order, OrderContent } from '../data/orders-repo.js';
import type { OrderStatus } from '../domain/order-status.js';
import { ConflictError, NotFoundError, PreconditionFailedError } from '../errors.js';
import { checkIfMatch, strongEtag } from '../http/conditional.js';
import type { RouteDeps } from './deps.js';
import { Perm, type Permission } from '../permissions.js';

/** JSON representation of an order (the ETag is computed over exactly this). */
export function orderJson(order: Order) {
  return {
    ...order,
    createdAt: order.createdAt.toISOString(),
    updatedAt: order.updatedAt.toISOString(),
  };
}

const representations = new WeakMap<Order, { body: ReturnType<typeof orderJson>; etag: string }>();

/** An order's JSON and strong ETag, once per Order object (the read cache shares frozen Orders). */
export function representationOf(order: Order): {
  body: ReturnType<typeof orderJson>;
  etag: string;
} {
  let known = representations.get(order);
  if (!known) {
    const body = orderJson(order);
    known = { body, etag: strongEtag(body) };
    representations.set(order, known);
  }
  return known;
}

/** Admins (`orders:*`) see every order; everyone else only their own (docs/api-contracts.md). */
export function visibilityOf(principal: Principal): { ownerId?: string } {
  return hasPermission(principal.permissions, Perm.OrdersAll) ? {} : { ownerId: principal.subject };
}

/** Loads an order for `permission`: one the caller may not see is a 404 (BOLA), not its own a 403. */
export async function loadOrderFor(
  deps: RouteDeps,
  principal: Principal,
  id: string,
  permission: Permission | undefined,
  { recent = false }: { recent?: boolean } = {},
): Promise<Order> {
  const { orders } = deps.repos;
  const visibility = visibilityOf(principal);
  const order = await (recent ? orders.findRecent(id, visibility) : orders.find(id, visibility));
  if (!order) throw new NotFoundError();
  requireOrderPermission(principal, permission, order.userId);
  return order;
}

/** The route's permission on an order owned by `ownerId`: its owner's, or `orders:*`. */
export function requireOrderPermission(
  principal: Principal,
  permission: Permission | undefined,
  ownerId: string,
): void {
  if (!permission) throw new TypeError('an order route declares its permission');
  requirePermission(principal, permission, { ownerId });
}

export interface WriteOptions {
  bodyVersion?: number | undefined;
  /** A state check (e.g. the status machine) run after the preconditions (RFC 9110 §13.2.2). */
  check?: () => void;
}

/** Writes under If-Match (412) and body `version` (409); the UPDATE is conditional on version. */
export async function writeOrder(
  ctx: ParameterizedContext,
  deps: RouteDeps,
  order: Order,
  changes: Partial<OrderContent> & { status?: OrderStatus },
  options: WriteOptions = {},
): Promise<void> {
  const conditional = checkIfMatch(ctx, orderJson(order));
  if (options.bodyVersion !== undefined && options.bodyVersion !== order.version) {
    throw new ConflictError('version_conflict', `the order is at version ${order.version}`);
  }
  options.check?.();
  // An empty merge patch changes nothing: no write, no new version, same ETag.
  if (Object.values(changes).every((v) => v === undefined)) {
    const body = orderJson(order);
    ctx.set('ETag', strongEtag(body));
    ctx.body = body;
    return;
  }
  const updated = await deps.repos.orders.update(order.id, order.version, changes, deps.clock());
  if (!updated) {
    if (conditional) throw new PreconditionFailedError();
    throw new ConflictError(
      options.bodyVersion !== undefined ? 'version_conflict' : 'conflict',
      'the order was changed concurrently; fetch it and retry',
    );
  }
  const body = orderJson(updated);
  ctx.set('ETag', strongEtag(body));
  ctx.body = body;
}

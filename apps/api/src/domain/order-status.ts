import { ConflictError } from '../errors.js';

/** Order lifecycle (README, "The API"): pending -> open -> fulfilled; pending|open -> cancelled. */
export const ORDER_STATUSES = ['pending', 'open', 'fulfilled', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const ORDER_TRANSITIONS: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = {
  pending: ['open', 'cancelled'],
  open: ['fulfilled', 'cancelled'],
  fulfilled: [],
  cancelled: [],
};

export function canTransition(from: OrderStatus, to: OrderStatus): boolean {
  return ORDER_TRANSITIONS[from].includes(to);
}

export function assertTransition(from: OrderStatus, to: OrderStatus): void {
  if (!canTransition(from, to)) {
    throw new ConflictError('invalid_transition', `an order cannot go from ${from} to ${to}`);
  }
}

/** Content (customer, amount, items, note) may change only while the order is live. */
export function assertEditable(status: OrderStatus): void {
  if (ORDER_TRANSITIONS[status].length === 0) {
    throw new ConflictError('order_closed', `a ${status} order cannot be changed`);
  }
}

import type { Http } from '../http.js';
import type {
  CallOptions,
  OperationResponse,
  Order,
  OrderCreate,
  OrderListParams,
  OrderPage,
  OrderPatch,
  OrderReplace,
} from '../types.js';

/** Options of writes that support optimistic concurrency. */
export interface WriteOptions extends CallOptions {
  /** ETag from a previous GET: a stale one gives 412 and nothing is written. */
  ifMatch?: string;
}

/** `/orders`: offset-paginated list, CRUD and the status actions. */
export interface OrdersApi {
  list(params?: OrderListParams, options?: CallOptions): Promise<OrderPage>;
  /** Conditional GET: a 304 is answered from the ETag cache. */
  get(id: string, options?: CallOptions): Promise<Order>;
  create(body: OrderCreate, options?: CallOptions): Promise<Order>;
  /** PUT: full replacement; resolves the updated order. */
  replace(id: string, body: OrderReplace, options?: WriteOptions): Promise<Order>;
  /** PATCH (JSON merge patch); resolves the updated order. */
  update(id: string, patch: OrderPatch, options?: WriteOptions): Promise<Order>;
  delete(id: string, options?: WriteOptions): Promise<void>;
  /** POST /orders/:id/cancel: pending or open -> cancelled. */
  cancel(id: string, options?: WriteOptions): Promise<Order>;
  /** POST /orders/:id/confirm: pending -> open. */
  confirm(id: string, options?: WriteOptions): Promise<Order>;
  /** POST /orders/:id/fulfill: open -> fulfilled (needs `orders:*`). */
  fulfill(id: string, options?: WriteOptions): Promise<Order>;
}

export function createOrdersApi(http: Http): OrdersApi {
  const one = (id: string): string => `/orders/${encodeURIComponent(id)}`;
  const write = (options?: WriteOptions): CallOptions => ({
    signal: options?.signal,
    headers: { ...options?.headers, ...(options?.ifMatch ? { 'If-Match': options.ifMatch } : {}) },
  });
  const action = async (
    id: string,
    name: 'cancel' | 'confirm' | 'fulfill',
    options?: WriteOptions,
  ): Promise<Order> =>
    (await http.request<Order>({ method: 'POST', path: `${one(id)}/${name}`, ...write(options) }))
      .data;
  return {
    async list(params = {}, options) {
      const { status, customer, createdAfter, page, limit } = params;
      return (
        await http.request<OperationResponse<'listOrders'>>({
          method: 'GET',
          path: '/orders',
          query: { status, customer, createdAfter, page, limit },
          ...options,
        })
      ).data;
    },
    async get(id, options) {
      return (
        await http.request<OperationResponse<'getOrder'>>({
          method: 'GET',
          path: one(id),
          ...options,
        })
      ).data;
    },
    async create(body, options) {
      return (
        await http.request<OperationResponse<'createOrder'>>({
          method: 'POST',
          path: '/orders',
          json: body,
          ...options,
        })
      ).data;
    },
    async replace(id, body, options) {
      return (
        await http.request<OperationResponse<'replaceOrder'>>({
          method: 'PUT',
          path: one(id),
          json: body,
          ...write(options),
        })
      ).data;
    },
    async update(id, patch, options) {
      return (
        await http.request<OperationResponse<'updateOrder'>>({
          method: 'PATCH',
          path: one(id),
          json: patch,
          ...write(options),
        })
      ).data;
    },
    async delete(id, options) {
      await http.request<void>({ method: 'DELETE', path: one(id), ...write(options) });
    },
    cancel: (id, options) => action(id, 'cancel', options),
    confirm: (id, options) => action(id, 'confirm', options),
    fulfill: (id, options) => action(id, 'fulfill', options),
  };
}

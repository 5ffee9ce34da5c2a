import type { Http } from '../http.js';
import type {
  CallOptions,
  OffsetPage,
  Order,
  OrderCreate,
  OrderListParams,
  OrderPatch,
  OrderReplace,
} from '../types.js';

/** Options of writes that support optimistic concurrency. */
export interface WriteOptions extends CallOptions {
  /** ETag from a previous GET: a stale one gives 412 and nothing is written. */
  ifMatch?: string;
}

/** `/orders`: offset-paginated list, CRUD and the cancel action. */
export interface OrdersApi {
  list(params?: OrderListParams, options?: CallOptions): Promise<OffsetPage<Order>>;
  /** Conditional GET: a 304 is answered from the ETag cache. */
  get(id: string, options?: CallOptions): Promise<Order>;
  create(body: OrderCreate, options?: CallOptions): Promise<Order>;
  /** PUT; resolves undefined when the server answers 204. */
  replace(id: string, body: OrderReplace, options?: WriteOptions): Promise<Order | undefined>;
  /** PATCH; resolves undefined when the server answers 204. */
  update(id: string, patch: OrderPatch, options?: WriteOptions): Promise<Order | undefined>;
  delete(id: string, options?: WriteOptions): Promise<void>;
  cancel(id: string, options?: CallOptions): Promise<Order>;
}

export function createOrdersApi(http: Http): OrdersApi {
  const one = (id: string): string => `/orders/${encodeURIComponent(id)}`;
  const write = (options?: WriteOptions): CallOptions => ({
    signal: options?.signal,
    headers: { ...options?.headers, ...(options?.ifMatch ? { 'If-Match': options.ifMatch } : {}) },
  });
  return {
    async list(params = {}, options) {
      const { status, customer, createdAfter, page, limit } = params;
      return (
        await http.request<OffsetPage<Order>>({
          method: 'GET',
          path: '/orders',
          query: { status, customer, createdAfter, page, limit },
          ...options,
        })
      ).data;
    },
    async get(id, options) {
      return (await http.request<Order>({ method: 'GET', path: one(id), ...options })).data;
    },
    async create(body, options) {
      return (
        await http.request<Order>({ method: 'POST', path: '/orders', json: body, ...options })
      ).data;
    },
    async replace(id, body, options) {
      return (
        await http.request<Order | undefined>({
          method: 'PUT',
          path: one(id),
          json: body,
          ...write(options),
        })
      ).data;
    },
    async update(id, patch, options) {
      return (
        await http.request<Order | undefined>({
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
    async cancel(id, options) {
      return (await http.request<Order>({ method: 'POST', path: `${one(id)}/cancel`, ...options }))
        .data;
    },
  };
}

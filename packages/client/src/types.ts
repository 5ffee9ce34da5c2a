/**
 * Resource types, hand-written from DESIGN.md and the orders table of packages/db.
 * They are meant to be replaced by `src/generated/openapi.ts` (see
 * `scripts/generate-types.ts`) once apps/api publishes /openapi.json; until then, the
 * payment, event, upload and API-key shapes are this package's best reading of the
 * design and may lag the server.
 */

/** Offset pagination envelope (`/orders`). */
export interface OffsetPage<T> {
  items: T[];
  total: number;
  page: number;
  limit: number;
}

/** Cursor pagination envelope (`/users`, `/payments`, `/api-keys`). */
export interface CursorPage<T> {
  items: T[];
  /** Pass as `after` to get the next page; null on the last page. */
  nextCursor: string | null;
}

/** Time-based pagination envelope (`/events`). */
export interface TimePage<T> {
  items: T[];
  /** Pass as `before` to get older items; null when there are none. */
  nextBefore: string | null;
}

/** Order lifecycle: pending -> open -> fulfilled, pending|open -> cancelled. */
export type OrderStatus = 'pending' | 'open' | 'fulfilled' | 'cancelled';

export interface OrderItem {
  sku: string;
  quantity: number;
}

export interface Order {
  id: string;
  userId: string;
  customer: string;
  status: OrderStatus;
  /** Minor units (cents). */
  amount: number;
  /** ISO 4217, e.g. `EUR`. */
  currency: string;
  items: OrderItem[] | null;
  note: string | null;
  /** Optimistic-concurrency version; a stale value in a write gives 409. */
  version: number;
  createdAt: string;
  updatedAt: string;
}

/** Body of POST /orders. Status is read-only: new orders start `pending`. */
export interface OrderCreate {
  customer: string;
  amount: number;
  currency: string;
  items?: OrderItem[];
  note?: string | null;
}

/** Body of PUT /orders/:id (full replacement). */
export interface OrderReplace extends OrderCreate {
  version?: number;
}

/** Body of PATCH /orders/:id. */
export type OrderPatch = Partial<OrderReplace>;

/** Filters of GET /orders. */
export interface OrderListParams {
  /** Repeated as `status=a&status=b`. */
  status?: OrderStatus | OrderStatus[];
  customer?: string;
  /** Date, `YYYY-MM-DD`. */
  createdAfter?: string;
  page?: number;
  /** 1..100, default 20. */
  limit?: number;
}

export interface CursorParams {
  after?: string;
  limit?: number;
}

export interface User {
  id: string;
  email: string;
  name: string | null;
  roles: string[];
  createdAt: string;
}

export interface Payment {
  id: string;
  amount: number;
  currency: string;
  status: string;
  orderId?: string | null;
  createdAt: string;
}

/** Body of POST /payments. */
export interface PaymentCreate {
  amount: number;
  currency: string;
  orderId?: string;
  description?: string;
}

export interface EventItem {
  id: string;
  type: string;
  /** ISO 8601. */
  createdAt: string;
  data?: unknown;
}

export interface EventListParams {
  /** ISO 8601 timestamp (or Date); items strictly older are returned. */
  before?: string | Date;
  limit?: number;
}

/** An API key record; the secret itself is never returned after creation. */
export interface ApiKey {
  id: string;
  name: string | null;
  /** First characters of the key, to recognise it. */
  prefix?: string;
  permissions?: string[];
  revoked: boolean;
  createdAt: string;
  lastUsedAt?: string | null;
}

export interface ApiKeyCreate {
  name?: string;
  /** Subset of the caller's permissions; keep it minimal. */
  permissions?: string[];
}

/** Answer of POST /api-keys: the record plus the key, shown this once. */
export interface ApiKeyCreated extends ApiKey {
  /** `sk_live_<43 base64url chars>`. Store it now: it cannot be read again. */
  key: string;
}

export interface Upload {
  id: string;
  caption: string | null;
  filename?: string | null;
  contentType?: string | null;
  size?: number;
  createdAt: string;
}

/** Input of uploads.upload(): sent as multipart parts `file` and `caption`. */
export interface UploadInput {
  file: Blob;
  /** File name of the part; a File's own name when omitted. */
  filename?: string;
  caption?: string;
}

/** Options accepted by every resource method. */
export interface CallOptions {
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

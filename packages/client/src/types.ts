// Aliases of the generated OpenAPI types (`pnpm client:generate`); hand-written ones say so.
import type { components, operations } from './generated/openapi.js';

/** Named schemas of the API (`components.schemas` of /openapi.json). */
export type Schemas = components['schemas'];

/** Operation ids of the API, e.g. `getOrder`. */
export type OperationId = keyof operations;

type Responses<K extends OperationId> = operations[K]['responses'];

/** The JSON body of an operation's response with `status` (default: its 2xx answer). */
export type OperationResponse<
  K extends OperationId,
  S extends keyof Responses<K> = Extract<keyof Responses<K>, 200 | 201>,
> = Responses<K>[S] extends { content: { 'application/json': infer T } } ? T : never;

/** The JSON body of an operation's request. */
export type OperationBody<K extends OperationId> =
  NonNullable<operations[K]['requestBody']> extends { content: { 'application/json': infer T } }
    ? T
    : never;

/** The query parameters of an operation. */
export type OperationQuery<K extends OperationId> = NonNullable<
  operations[K]['parameters']['query']
>;

// Hand-written generics for code that handles any page; the generated pages are instances.

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
export type OrderStatus = Schemas['OrderStatus'];
export type OrderItem = Schemas['OrderItem'];
/** `items` and `note` are absent (not null) when the order has none. */
export type Order = Schemas['Order'];
export type OrderPage = Schemas['OrderPage'];
/** Body of POST /orders. Status is read-only: new orders start `pending`. */
export type OrderCreate = Schemas['CreateOrder'];
export type OrderReplace = Schemas['ReplaceOrder'];
/** Body of PATCH /orders/:id (JSON merge patch: null removes `items` or `note`). */
export type OrderPatch = Schemas['PatchOrder'];

/** Filters of GET /orders; `status` also takes a single value. */
export type OrderListParams = Omit<OperationQuery<'listOrders'>, 'status'> & {
  status?: OrderStatus | OrderStatus[];
};

/** `after` and `limit` of the cursor-paginated lists (`/users`, `/payments`, `/api-keys`). */
export type CursorParams = OperationQuery<'listUsers'>;

export type User = Schemas['User'];
export type UserPage = Schemas['UserPage'];

export type Payment = Schemas['Payment'];
export type PaymentPage = Schemas['PaymentPage'];
/** Body of POST /payments: a payment always pays an order the caller may see. */
export type PaymentCreate = Schemas['CreatePayment'];

/** One entry of GET /events (its `id` is also the SSE `id:` of GET /stream). */
export type EventItem = Schemas['Event'];
export type EventPage = Schemas['EventPage'];

/** Query of GET /events; `before` also takes a Date (sent as ISO 8601). */
export type EventListParams = Omit<OperationQuery<'listEvents'>, 'before'> & {
  before?: string | Date;
};

/** An API key record; the secret itself is never returned after creation. */
export type ApiKey = Schemas['ApiKey'];
export type ApiKeyPage = Schemas['ApiKeyPage'];
/** Body of POST /api-keys. `permissions`: a subset of the caller's; keep it minimal. */
export type ApiKeyCreate = Schemas['CreateApiKeyRequest'];
/** Answer of POST /api-keys: the record plus `key`, shown this once. */
export type ApiKeyCreated = Schemas['CreatedApiKey'];

export type Upload = Schemas['Upload'];

/** Multipart parts `file` and `caption`; hand-written, the document says nothing of Blob or File. */
export interface UploadInput {
  file: Blob;
  /** File name of the part; a File's own name when omitted. */
  filename?: string;
  caption?: string;
}

/** Error body of every non-2xx JSON answer: `{error, message?}`. */
export type ErrorBody = Schemas['Error'];
/** The 422 body: `{error: 'validation_failed', message, fields}`. */
export type ValidationErrorBody = Schemas['ValidationError'];

/** Options accepted by every resource method. Hand-written: client-side only. */
export interface CallOptions {
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

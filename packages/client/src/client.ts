import { createDpopKey } from './dpop.js';
import type { DpopKey } from './dpop.js';
import { createEtagCache } from './etag-cache.js';
import type { EtagCache } from './etag-cache.js';
import { createHttp } from './http.js';
import type { HttpResponse, RequestOptions } from './http.js';
import { createApiKeysApi } from './resources/api-keys.js';
import type { ApiKeysApi } from './resources/api-keys.js';
import { createEventsApi } from './resources/events.js';
import type { EventsApi } from './resources/events.js';
import { createOrdersApi } from './resources/orders.js';
import type { OrdersApi } from './resources/orders.js';
import { createPaymentsApi } from './resources/payments.js';
import type { PaymentsApi } from './resources/payments.js';
import { createUploadsApi } from './resources/uploads.js';
import type { UploadsApi } from './resources/uploads.js';
import { createUsersApi } from './resources/users.js';
import type { UsersApi } from './resources/users.js';
import { resolveRetry } from './retry.js';
import type { RetryOptions } from './retry.js';
import { openStream } from './sse.js';
import type { SseEvent, StreamOptions } from './sse.js';
import { createTokenManager } from './tokens.js';
import type { AuthOptions } from './tokens.js';

export interface PortcullisClientOptions extends AuthOptions {
  /** Address of the API, e.g. `http://localhost:3000`. */
  baseUrl: string;
  /** Per-attempt timeout (connect only, for the event stream). Default 15000 ms. */
  timeoutMs?: number;
  retry?: RetryOptions;
  /** ETag cache for GETs; `false` disables it. Default: in-memory LRU of 500 entries. */
  etagCache?: EtagCache | false;
  /** Headers sent on every request (e.g. a User-Agent in Node). */
  headers?: Record<string, string>;
  /** Browser cookie mode, e.g. `include` for the `sid` session cookie across origins. */
  credentials?: RequestInit['credentials'];
  fetch?: typeof fetch;
  /** DPoP key (README "DPoP"), or `true` for a generated non-extractable ES256 one (`dpopKey()`). */
  dpop?: DpopKey | true;
}

/** The reference client of the Portcullis API. */
export interface PortcullisClient {
  orders: OrdersApi;
  users: UsersApi;
  payments: PaymentsApi;
  events: EventsApi;
  apiKeys: ApiKeysApi;
  uploads: UploadsApi;
  /** Same as `payments.create`. */
  createPayment: PaymentsApi['create'];
  /** Server-sent events of GET /stream, parsed incrementally, resuming on reconnect. */
  stream(options?: StreamOptions): AsyncIterable<SseEvent>;
  /** Escape hatch: any call through the same token, retry, cache and error handling. */
  request<T>(options: RequestOptions): Promise<HttpResponse<T>>;
  /** Replaces the in-memory access token (e.g. after sign-in); undefined forgets it. */
  setAccessToken(token: string | undefined): void;
  /** Drops every cached GET body (call on sign-out). */
  clearCache(): void;
  /** The DPoP key of the `dpop` option (created on first use), for the token requests. */
  dpopKey(): Promise<DpopKey | undefined>;
}

/** Creates a client. Nothing is persisted: tokens and cached bodies live in memory. */
export function createPortcullisClient(options: PortcullisClientOptions): PortcullisClient {
  const tokens = createTokenManager(options);
  const dpop = options.dpop === true ? once(() => createDpopKey()) : undefined;
  const dpopKey = options.dpop === true ? dpop : options.dpop && constant(options.dpop);
  const cache = options.etagCache === false ? undefined : (options.etagCache ?? createEtagCache());
  const http = createHttp({
    baseUrl: options.baseUrl,
    timeoutMs: options.timeoutMs ?? 15_000,
    retry: resolveRetry(options.retry),
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    headers: options.headers ?? {},
    credentials: options.credentials,
    cache,
    tokens,
    ...(dpopKey ? { dpop: dpopKey } : {}),
  });
  const payments = createPaymentsApi(http);
  return {
    orders: createOrdersApi(http),
    users: createUsersApi(http),
    payments,
    events: createEventsApi(http),
    apiKeys: createApiKeysApi(http),
    uploads: createUploadsApi(http),
    createPayment: payments.create,
    stream: (streamOptions) => openStream(http, streamOptions),
    request: (requestOptions) => http.request(requestOptions),
    setAccessToken: (token) => tokens.set(token),
    clearCache: () => cache?.clear(),
    dpopKey: async () => dpopKey?.(),
  };
}

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

const constant =
  <T>(value: T) =>
  async (): Promise<T> =>
    value;

// Generated from openApiDocument() of @portcullis/api by packages/client/scripts/generate-types.ts.
// Do not edit: change the API's zod schemas, then run `pnpm client:generate`.

export interface paths {
  '/.well-known/oauth-protected-resource': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** OAuth 2.0 Protected Resource Metadata (RFC 9728) */
    get: operations['protectedResourceMetadata'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api-keys': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List the caller’s API keys (never the key or its hash) */
    get: operations['listApiKeys'];
    put?: never;
    /** Create an API key (the key is in this response only) */
    post: operations['createApiKey'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/api-keys/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get one of the caller’s API keys */
    get: operations['getApiKey'];
    put?: never;
    post?: never;
    /** Revoke an API key, effective on its next request */
    delete: operations['revokeApiKey'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/events': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Event feed, newest first (time cursor `before`) */
    get: operations['listEvents'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/healthz': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Liveness */
    get: operations['health'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/login': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Start a browser session (sets the sid cookie) */
    post: operations['login'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/logout': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** End this browser session (idempotent; clears the sid cookie) */
    post: operations['logout'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/logout/all': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** End every session and access token of the calling user, at once */
    post: operations['logoutEverywhere'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/openapi.json': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** This document */
    get: operations['openApi'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/orders': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List orders (admins: all; others: their own) */
    get: operations['listOrders'];
    put?: never;
    /** Create an order (status pending, owned by the caller) */
    post: operations['createOrder'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/orders/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get one order (ETag, If-None-Match -> 304) */
    get: operations['getOrder'];
    /** Replace an order’s content (omitted optional fields are removed) */
    put: operations['replaceOrder'];
    post?: never;
    /** Delete an order (orders:delete, i.e. admins) */
    delete: operations['deleteOrder'];
    options?: never;
    head?: never;
    /** Change some fields (JSON merge patch: null removes items or note) */
    patch: operations['updateOrder'];
    trace?: never;
  };
  '/orders/{id}/cancel': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Cancel a pending or open order */
    post: operations['cancelOrder'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/orders/{id}/confirm': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Confirm a pending order (-> open) */
    post: operations['confirmOrder'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/orders/{id}/fulfill': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Mark an open order fulfilled (admins) */
    post: operations['fulfillOrder'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/payments': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List payments, newest first (admins: all; others: their own) */
    get: operations['listPayments'];
    put?: never;
    /** Pay for an order, exactly once per Idempotency-Key */
    post: operations['createPayment'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/payments/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get one payment */
    get: operations['getPayment'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/readyz': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Readiness (database reachable) */
    get: operations['ready'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/stream': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /**
     * Live events as server-sent events; resume with Last-Event-ID
     * @description Frames are `id: <event id>` + `data: <Event JSON>`; `: ping` comments every 15 s. Ends when the credential expires or is revoked. At most STREAMS_PER_PRINCIPAL streams per caller.
     */
    get: operations['streamEvents'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/uploads': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Upload a file (multipart/form-data: `file` and `caption`) */
    post: operations['createUpload'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/uploads/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Upload metadata (owners and admins) */
    get: operations['getUpload'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/uploads/{id}/content': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Download the bytes (always as an attachment) */
    get: operations['downloadUpload'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/uploads/direct/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    /** The pre-signed PUT (no other credential; once; before it expires) */
    put: operations['putDirectUpload'];
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/uploads/presign': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    get?: never;
    put?: never;
    /** Get a pre-signed URL for one direct PUT of a large file */
    post: operations['presignUpload'];
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/users': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** List users (cursor pagination) */
    get: operations['listUsers'];
    put?: never;
    post?: never;
    delete?: never;
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
  '/users/{id}': {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    /** Get one user */
    get: operations['getUser'];
    put?: never;
    post?: never;
    /** Delete a user (users:delete) */
    delete: operations['deleteUser'];
    options?: never;
    head?: never;
    patch?: never;
    trace?: never;
  };
}
export type webhooks = Record<string, never>;
export interface components {
  schemas: {
    ApiKey: {
      /** Format: date-time */
      createdAt: string;
      /** Format: uuid */
      id: string;
      /** Format: date-time */
      lastUsedAt: string | null;
      name: string;
      permissions: string[];
      rateLimit: number | null;
      revoked: boolean;
      /** Format: date-time */
      revokedAt: string | null;
    };
    ApiKeyPage: {
      items: components['schemas']['ApiKey'][];
      nextCursor: string | null;
    };
    CreateApiKeyRequest: {
      name: string;
      /** @description A subset of the caller’s own permissions, e.g. `orders:read` */
      permissions: string[];
      /** @description Requests per rate-limit window; at most the server default (lower only) */
      rateLimit?: number;
    };
    CreatedApiKey: components['schemas']['ApiKey'] & {
      /** @description The key, shown this once: `sk_live_` + 43 base64url characters */
      key: string;
    };
    CreateOrder: {
      /**
       * @description Integer amount in minor units (cents)
       * @example 1999
       */
      amount: number;
      /** @example EUR */
      currency: string;
      /** @example ACME Corp */
      customer: string;
      items?: components['schemas']['OrderItem'][];
      note?: string;
    };
    CreatePayment: {
      /**
       * @description Positive integer in minor units (cents)
       * @example 1999
       */
      amount: number;
      /** @example EUR */
      currency: string;
      /**
       * Format: uuid
       * @description An order the caller may see (404 otherwise; 409 if cancelled)
       */
      orderId: string;
    };
    Error: {
      /**
       * @description Machine-readable error code
       * @example not_found
       */
      error: string;
      message?: string;
    };
    Event: {
      /**
       * @description RFC 8693: the services (client ids) that made the change for the owner with an exchanged token, the latest first; absent when the owner’s own client made it
       * @example [
       *       "order-service"
       *     ]
       */
      actor?: string[];
      /**
       * @description ISO 8601, microseconds
       * @example 2025-01-31T12:00:00.123456Z
       */
      createdAt: string;
      /** @description The subject after the change (e.g. the order), or `{id}` when deleted */
      data?: unknown;
      /** @description Increasing event id; the SSE `id:` of GET /stream */
      id: string;
      subjectId: string;
      /** @enum {string} */
      subjectType: 'order' | 'payment' | 'upload' | 'user';
      /** @enum {string} */
      type:
        | 'order.created'
        | 'order.updated'
        | 'order.cancelled'
        | 'order.deleted'
        | 'payment.succeeded'
        | 'payment.failed'
        | 'upload.stored'
        | 'user.deleted';
    };
    EventPage: {
      items: components['schemas']['Event'][];
      /** @description Pass as `before` for older events; null at the end */
      nextBefore: string | null;
    };
    LoginRequest: {
      email: string;
      password: string;
    };
    LoginResponse: {
      user: {
        email: string;
        id: string;
        roles: string[];
      };
    };
    Order: {
      amount: number;
      /** Format: date-time */
      createdAt: string;
      currency: string;
      customer: string;
      /** Format: uuid */
      id: string;
      items?: components['schemas']['OrderItem'][];
      note?: string;
      status: components['schemas']['OrderStatus'];
      /** Format: date-time */
      updatedAt: string;
      /** @description Owner: the subject that created the order */
      userId: string;
      version: number;
    };
    OrderItem: {
      quantity: number;
      sku: string;
    };
    OrderPage: {
      items: components['schemas']['Order'][];
      limit: number;
      page: number;
      total: number;
    };
    /** @enum {string} */
    OrderStatus: 'pending' | 'open' | 'fulfilled' | 'cancelled';
    PatchOrder: {
      /**
       * @description Integer amount in minor units (cents)
       * @example 1999
       */
      amount?: number;
      /** @example EUR */
      currency?: string;
      /** @example ACME Corp */
      customer?: string;
      items?: components['schemas']['OrderItem'][] | null;
      note?: string | null;
      /** @description The version the change was based on; stale -> 409 */
      version?: number;
    };
    Payment: {
      amount: number;
      /** Format: date-time */
      createdAt: string;
      currency: string;
      /** Format: uuid */
      id: string;
      /** Format: uuid */
      orderId: string;
      /** @description The payment provider’s reference of the charge */
      providerRef: string;
      /** @enum {string} */
      status: 'succeeded' | 'failed';
      /** @description Who paid: the subject that created it */
      userId: string;
    };
    PaymentPage: {
      items: components['schemas']['Payment'][];
      nextCursor: string | null;
    };
    PresignedUpload: {
      /** Format: date-time */
      expiresAt: string;
      /** @enum {string} */
      method: 'PUT';
      /** Format: uuid */
      uploadId: string;
      /** @description Relative to the API: PUT the bytes here once, before expiresAt */
      url: string;
    };
    PresignUpload: {
      contentType: string;
      filename: string;
      /** @description Bytes the PUT will send at most */
      size: number;
    };
    ReplaceOrder: {
      /**
       * @description Integer amount in minor units (cents)
       * @example 1999
       */
      amount: number;
      /** @example EUR */
      currency: string;
      /** @example ACME Corp */
      customer: string;
      items?: components['schemas']['OrderItem'][];
      note?: string;
      /** @description The version the change was based on; stale -> 409 */
      version?: number;
    };
    StepUpError: {
      /** @description The authorization request's `acr_values` */
      acr_values: string;
      /** @enum {string} */
      error: 'insufficient_user_authentication';
      /** @description The authorization request's `max_age`, seconds */
      max_age?: number;
      message: string;
    };
    Upload: {
      caption: string | null;
      contentType: string;
      /** Format: date-time */
      createdAt: string;
      /** @description The client’s file name, sanitized (metadata only) */
      filename: string;
      /** Format: uuid */
      id: string;
      ownerId: string;
      /** @description Hex SHA-256 of the stored bytes */
      sha256: string | null;
      size: number | null;
      /**
       * @description pending until a pre-signed PUT arrives
       * @enum {string}
       */
      status: 'pending' | 'receiving' | 'stored';
      /** Format: date-time */
      storedAt: string | null;
    };
    User: {
      /** Format: date-time */
      createdAt: string;
      email: string;
      id: string;
      name: string | null;
      roles: string[];
      /** Format: date-time */
      updatedAt: string;
    };
    UserPage: {
      items: components['schemas']['User'][];
      /** @description null on the last page */
      nextCursor: string | null;
    };
    ValidationError: {
      /** @enum {string} */
      error: 'validation_failed';
      /** @description Messages per field (dotted path); unknown fields are named too */
      fields: {
        [key: string]: string[];
      };
      message: string;
    };
  };
  responses: never;
  parameters: never;
  requestBodies: never;
  headers: never;
  pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
  protectedResourceMetadata: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Who issues tokens for this API, and how to present them */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            authorization_servers: string[];
            bearer_methods_supported: string[];
            dpop_bound_access_tokens_required: boolean;
            dpop_signing_alg_values_supported?: string[];
            resource: string;
            resource_documentation?: string;
            scopes_supported: string[];
          } & {
            [key: string]: unknown;
          };
        };
      };
    };
  };
  listApiKeys: {
    parameters: {
      query?: {
        /** @description Opaque cursor: the nextCursor of the previous page */
        after?: string;
        /** @description Page size, 1..100 */
        limit?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of keys */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiKeyPage'];
        };
      };
      /** @description Tampered or foreign cursor (`invalid_cursor`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationError'];
        };
      };
    };
  };
  createApiKey: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateApiKeyRequest'];
      };
    };
    responses: {
      /** @description Created */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['CreatedApiKey'];
        };
      };
      /** @description Malformed JSON (`malformed_json`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`), or `insufficient_user_authentication`: sign in again with `acr_values` and `max_age` (RFC 9470; README "Step-up") */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'] | components['schemas']['StepUpError'];
        };
      };
      /** @description Lacking the permission, or a credential that is no user sign-in (API key, client credentials): exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Body is not application/json */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationError'];
        };
      };
    };
  };
  getApiKey: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Resource id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The key record */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ApiKey'];
        };
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  revokeApiKey: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description Resource id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Revoked (also when it already was) */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  listEvents: {
    parameters: {
      query?: {
        /** @description Only events strictly older than this ISO 8601 timestamp. Pass `nextBefore` of the previous page as is: it is the last item’s `createdAt` plus `~<id>`, so events with equal timestamps (ordered by id) are neither skipped nor repeated. */
        before?: string;
        /** @description Page size, 1..100 */
        limit?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of events */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['EventPage'];
        };
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationError'];
        };
      };
    };
  };
  health: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The process is up */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            database?: string;
            status: string;
          };
        };
      };
    };
  };
  login: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['LoginRequest'];
        'application/x-www-form-urlencoded': components['schemas']['LoginRequest'];
      };
    };
    responses: {
      /** @description Signed in; `Set-Cookie: sid=…; HttpOnly; Secure; SameSite=Strict; Path=/` */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['LoginResponse'];
        };
      };
      /** @description Wrong email or password (`invalid_credentials`), or the account has a second factor and signs in at the auth server (`second_factor_required`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description A foreign Origin (`forbidden_origin`), or the right password of an address not yet verified (`email_unverified`) */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationError'];
        };
      };
      /** @description Too many failed logins for this IP or account; see Retry-After */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Rate limits cannot be checked (fails closed); see Retry-After */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  logout: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Signed out */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description A foreign Origin (`forbidden_origin`) */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  logoutEverywhere: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Every session ended; access tokens issued until now are denied */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Not signed in */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description API keys and client credentials cannot log a user out (`forbidden`) */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  openApi: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description OpenAPI 3.1 */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            [key: string]: unknown;
          };
        };
      };
    };
  };
  listOrders: {
    parameters: {
      query?: {
        /** @description Orders created on or after 00:00 UTC of this date */
        createdAfter?: string;
        /** @description Exact customer name */
        customer?: string;
        /** @description Page size, 1..100 */
        limit?: number;
        /** @description Page number, from 1 */
        page?: number;
        /** @description Repeat (`status=open&status=pending`) or comma-separate */
        status?: components['schemas']['OrderStatus'][];
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of orders */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['OrderPage'];
        };
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationError'];
        };
      };
    };
  };
  createOrder: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreateOrder'];
      };
    };
    responses: {
      /** @description Created */
      201: {
        headers: {
          /** @description Strong validator for If-None-Match / If-Match */
          ETag: string;
          Location: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Order'];
        };
      };
      /** @description Malformed JSON (`malformed_json`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Body is not application/json */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationError'];
        };
      };
    };
  };
  getOrder: {
    parameters: {
      query?: never;
      header?: {
        /** @description ETag of a cached copy; 304 when unchanged */
        'if-none-match'?: string;
      };
      path: {
        /** @description Resource id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The order */
      200: {
        headers: {
          /** @description Strong validator for If-None-Match / If-Match */
          ETag: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Order'];
        };
      };
      /** @description Not modified */
      304: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  replaceOrder: {
    parameters: {
      query?: never;
      header?: {
        /** @description ETag from a previous GET; a stale value gives 412 and nothing is written */
        'if-match'?: string;
      };
      path: {
        /** @description Resource id */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['ReplaceOrder'];
      };
    };
    responses: {
      /** @description The updated order */
      200: {
        headers: {
          /** @description Strong validator for If-None-Match / If-Match */
          ETag: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Order'];
        };
      };
      /** @description Malformed JSON (`malformed_json`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description State conflict or stale `version` (`order_closed`, `version_conflict`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description If-Match is stale: nothing was written */
      412: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Body is not application/json */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationError'];
        };
      };
    };
  };
  deleteOrder: {
    parameters: {
      query?: never;
      header?: {
        /** @description ETag from a previous GET; a stale value gives 412 and nothing is written */
        'if-match'?: string;
      };
      path: {
        /** @description Resource id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Changed concurrently */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description If-Match is stale: nothing was written */
      412: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  updateOrder: {
    parameters: {
      query?: never;
      header?: {
        /** @description ETag from a previous GET; a stale value gives 412 and nothing is written */
        'if-match'?: string;
      };
      path: {
        /** @description Resource id */
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['PatchOrder'];
      };
    };
    responses: {
      /** @description The updated order */
      200: {
        headers: {
          /** @description Strong validator for If-None-Match / If-Match */
          ETag: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Order'];
        };
      };
      /** @description Malformed JSON (`malformed_json`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description State conflict or stale `version` (`order_closed`, `version_conflict`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description If-Match is stale: nothing was written */
      412: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Body is not application/json */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationError'];
        };
      };
    };
  };
  cancelOrder: {
    parameters: {
      query?: never;
      header?: {
        /** @description ETag from a previous GET; a stale value gives 412 and nothing is written */
        'if-match'?: string;
      };
      path: {
        /** @description Resource id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The order after the transition */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Order'];
        };
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Not allowed from the current status (`invalid_transition`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description If-Match is stale: nothing was written */
      412: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  confirmOrder: {
    parameters: {
      query?: never;
      header?: {
        /** @description ETag from a previous GET; a stale value gives 412 and nothing is written */
        'if-match'?: string;
      };
      path: {
        /** @description Resource id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The order after the transition */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Order'];
        };
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Not allowed from the current status (`invalid_transition`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description If-Match is stale: nothing was written */
      412: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  fulfillOrder: {
    parameters: {
      query?: never;
      header?: {
        /** @description ETag from a previous GET; a stale value gives 412 and nothing is written */
        'if-match'?: string;
      };
      path: {
        /** @description Resource id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The order after the transition */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Order'];
        };
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Not allowed from the current status (`invalid_transition`) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description If-Match is stale: nothing was written */
      412: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  listPayments: {
    parameters: {
      query?: {
        /** @description `nextCursor` of the previous page */
        after?: string;
        /** @description Page size, 1..100 */
        limit?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of payments */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PaymentPage'];
        };
      };
      /** @description Tampered or foreign cursor (`invalid_cursor`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationError'];
        };
      };
    };
  };
  createPayment: {
    parameters: {
      query?: never;
      header: {
        /** @description Required. 1..255 printable ASCII characters, identical on every retry of one payment. Scoped to the caller and kept 24 h: the same key and body replay the first response (`Idempotent-Replayed: true`); another body is 422; a request still running is 409. */
        'idempotency-key': string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['CreatePayment'];
      };
    };
    responses: {
      /** @description The payment (status succeeded or failed); a replay adds `Idempotent-Replayed: true` */
      201: {
        headers: {
          'Idempotent-Replayed'?: 'true';
          Location: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Payment'];
        };
      };
      /** @description `idempotency_key_required` / `idempotency_key_invalid` (or malformed JSON) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`), or `insufficient_user_authentication`: sign in again with `acr_values` and `max_age` (RFC 9470; README "Step-up") */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'] | components['schemas']['StepUpError'];
        };
      };
      /** @description Lacking the permission, or a credential that is no user sign-in: exactly `{"error":"forbidden"}`; or `insufficient_authorization_details`: the token carries RFC 9396 payment details and none allows this payment (order, currency, amount at most the authorized one) or it was made already (README "Payment authorization details") */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such order, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description `idempotency_key_in_flight`, or `order_closed` (the order is cancelled) */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Body is not application/json */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description `idempotency_key_reused` (same key, another body), or validation failed (not stored) */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Payment provider unavailable: retry with the same key */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  getPayment: {
    parameters: {
      query?: never;
      header?: {
        /** @description ETag of a cached copy; 304 when unchanged */
        'if-none-match'?: string;
      };
      path: {
        /** @description Resource id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The payment */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Payment'];
        };
      };
      /** @description Not modified */
      304: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  ready: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Ready */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            database?: string;
            status: string;
          };
        };
      };
      /** @description Not ready */
      503: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': {
            database?: string;
            status: string;
          };
        };
      };
    };
  };
  streamEvents: {
    parameters: {
      query?: never;
      header?: {
        /** @description Replay events after this id first */
        'last-event-id'?: string;
      };
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description An event stream */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'text/event-stream': string;
        };
      };
      /** @description Missing or invalid credential */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Lacking events:read: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Too many open streams (`Retry-After`) */
      429: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  createUpload: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'multipart/form-data': {
          caption?: string;
          /** Format: binary */
          file: string;
        };
      };
    };
    responses: {
      /** @description Stored */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Upload'];
        };
      };
      /** @description `payload_too_large`: more than UPLOAD_MAX_BYTES (nothing is kept) */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Not multipart/form-data */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description No `file` part, or a field too long */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  getUpload: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The upload */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Upload'];
        };
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  downloadUpload: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The file; `application/octet-stream` unless an allowlisted safe type */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/octet-stream': string;
        };
      };
      /** @description No such upload, not visible, or no content yet */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  putDirectUpload: {
    parameters: {
      query: {
        /** @description Unix seconds, as signed */
        expires: string;
        /** @description HMAC-SHA256 signature, base64url */
        sig: string;
      };
      header?: never;
      path: {
        id: string;
      };
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/octet-stream': string;
      };
    };
    responses: {
      /** @description Stored */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Upload'];
        };
      };
      /** @description Expired, altered or unknown URL */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description This URL was already used */
      409: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description More bytes than the pre-signed size */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
    };
  };
  presignUpload: {
    parameters: {
      query?: never;
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody: {
      content: {
        'application/json': components['schemas']['PresignUpload'];
      };
    };
    responses: {
      /** @description The URL and its expiry */
      201: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['PresignedUpload'];
        };
      };
      /** @description Malformed JSON (`malformed_json`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Body too large */
      413: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Body is not application/json */
      415: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationError'];
        };
      };
    };
  };
  listUsers: {
    parameters: {
      query?: {
        /** @description Opaque cursor: the nextCursor of the previous page */
        after?: string;
        /** @description Page size, 1..100 */
        limit?: number;
      };
      header?: never;
      path?: never;
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description A page of users */
      200: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['UserPage'];
        };
      };
      /** @description Tampered or foreign cursor (`invalid_cursor`) */
      400: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Validation failed */
      422: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['ValidationError'];
        };
      };
    };
  };
  getUser: {
    parameters: {
      query?: never;
      header?: {
        /** @description ETag of a cached copy; 304 when unchanged */
        'if-none-match'?: string;
      };
      path: {
        /** @description User id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description The user */
      200: {
        headers: {
          /** @description Strong validator for If-None-Match / If-Match */
          ETag: string;
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['User'];
        };
      };
      /** @description Not modified */
      304: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`) */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description Authenticated but lacking the permission: exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
  deleteUser: {
    parameters: {
      query?: never;
      header?: never;
      path: {
        /** @description User id */
        id: string;
      };
      cookie?: never;
    };
    requestBody?: never;
    responses: {
      /** @description Deleted */
      204: {
        headers: {
          [name: string]: unknown;
        };
        content?: never;
      };
      /** @description Missing or invalid credential (`WWW-Authenticate: Bearer`), or `insufficient_user_authentication`: sign in again with `acr_values` and `max_age` (RFC 9470; README "Step-up") */
      401: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'] | components['schemas']['StepUpError'];
        };
      };
      /** @description Lacking the permission, or a credential that is no user sign-in (API key, client credentials): exactly `{"error":"forbidden"}` */
      403: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
      /** @description No such resource, or not visible to the caller */
      404: {
        headers: {
          [name: string]: unknown;
        };
        content: {
          'application/json': components['schemas']['Error'];
        };
      };
    };
  };
}

// The demo API's vocabulary: what its routes check (docs/roles.md). The generic rules
// (`<resource>:<action>`, wildcards, scope narrowing) are @portcullis/claims'.
import { API_SCOPE } from '@portcullis/claims';

// `<resource>:*` grants one resource's actions; no global `*`, a typo away from everything.
export const Perm = {
  UsersRead: 'users:read',
  UsersWrite: 'users:write',
  UsersDelete: 'users:delete',
  UsersAll: 'users:*',
  OrdersRead: 'orders:read',
  OrdersWrite: 'orders:write',
  OrdersDelete: 'orders:delete',
  OrdersAll: 'orders:*',
  PaymentsRead: 'payments:read',
  PaymentsCreate: 'payments:create',
  PaymentsAll: 'payments:*',
  EventsRead: 'events:read',
  UploadsRead: 'uploads:read',
  UploadsCreate: 'uploads:create',
  UploadsDelete: 'uploads:delete',
  UploadsAll: 'uploads:*',
  ApiKeysRead: 'api-keys:read',
  ApiKeysCreate: 'api-keys:create',
  ApiKeysDelete: 'api-keys:delete',
  ApiKeysAll: 'api-keys:*',
} as const;

export type Permission = (typeof Perm)[keyof typeof Perm];

export const RESOURCES = ['users', 'orders', 'payments', 'events', 'uploads', 'api-keys'] as const;
export type Resource = (typeof RESOURCES)[number];

/** Every permission the API's routes declare: the built-in resource's catalogue (migration 029). */
export const PERMISSIONS: readonly Permission[] = Object.freeze([...new Set(Object.values(Perm))]);

/** Every scope of the API: `api` (every permission the roles grant) and each permission. */
export const API_SCOPES: readonly string[] = [API_SCOPE, ...PERMISSIONS];

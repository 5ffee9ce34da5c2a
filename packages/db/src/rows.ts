/** Row types as the database returns them (snake_case, Dates for timestamptz). */
export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  roles: string[];
  password_hash: string;
  /** Null for an active account (migration 018). */
  disabled_at: Date | null;
  /** When the address was proven; null until then (migration 019). */
  email_verified_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface OrderRow {
  id: string;
  user_id: string;
  customer: string;
  status: string;
  /** bigint: pg returns a string, PGlite a number or bigint; read it through Number(). */
  amount: string | number | bigint;
  currency: string;
  items: { sku: string; quantity: number }[] | null;
  note: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export interface ApiSecretRow {
  name: string;
  value: string;
  created_at: Date;
}

/** apps/api browser sessions (migration 005); `id_hash` is the SHA-256 of the cookie. */
export interface SessionRow {
  id_hash: string;
  user_id: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  user_agent: string | null;
}

/** apps/api API keys (migration 005); only the SHA-256 hex of the key is stored. */
export interface ApiKeyRow {
  id: string;
  owner_id: string;
  name: string;
  hash: string;
  permissions: string[];
  created_at: Date;
  last_used_at: Date | null;
  revoked: boolean;
  revoked_at: Date | null;
  rate_limit: number | null;
}

export interface IdempotencyKeyRow {
  subject: string;
  key: string;
  id: string;
  request_hash: string;
  state: 'in_flight' | 'completed';
  response_status: number | null;
  response_headers: Record<string, string> | null;
  response_body: unknown;
  created_at: Date;
  locked_at: Date;
  expires_at: Date;
}

export interface PaymentRow {
  id: string;
  user_id: string;
  order_id: string;
  /** bigint: read it through Number(). */
  amount: string | number | bigint;
  currency: string;
  status: 'succeeded' | 'failed';
  provider_ref: string;
  idempotency_id: string;
  created_at: Date;
}

/** A payment authorization detail used (migration 025). */
export interface PaymentAuthorizationRow {
  authorization_id: string;
  idempotency_id: string;
  subject: string;
  order_id: string;
  used_at: Date;
}

/** apps/api event outbox (migration 006); `id` is a bigserial (a string on pg). */
export interface EventRow {
  id: string | number;
  type: string;
  subject_type: string;
  subject_id: string;
  owner_id: string | null;
  data: unknown;
  created_at: Date;
  tx_id: string | number;
  /** The delegation chain (client ids, the latest actor first); null without one (migration 024). */
  actor: string[] | null;
}

export interface UploadRow {
  id: string;
  owner_id: string;
  status: 'pending' | 'receiving' | 'stored';
  filename: string;
  content_type: string;
  caption: string | null;
  size: string | number | null;
  max_size: string | number | null;
  sha256: string | null;
  storage_key: string;
  created_at: Date;
  stored_at: Date | null;
}

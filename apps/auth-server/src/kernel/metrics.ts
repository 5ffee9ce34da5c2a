import { createAppMetrics, type AppMetrics } from '@portcullis/observability';
import { Counter } from 'prom-client';
import { DEVICE_GRANT, TOKEN_EXCHANGE_GRANT } from './grant-types.js';

/** What the provider's event listeners count (oauth/grant-events.ts). */
export interface GrantMetrics {
  /** A token response of the token endpoint, by grant type. */
  tokenIssued(grantType: string): void;
  refreshReuse(): void;
}

export interface AuthMetrics extends AppMetrics {
  grants: GrantMetrics;
}

// The label is bounded: unknown grant types (refused anyway) count as `other`.
const GRANT_TYPES: Record<string, string> = {
  authorization_code: 'authorization_code',
  refresh_token: 'refresh_token',
  client_credentials: 'client_credentials',
  [DEVICE_GRANT]: 'device_code',
  [TOKEN_EXCHANGE_GRANT]: 'token_exchange',
};

/** The auth server's registry: HTTP metrics plus token and refresh-reuse counters. */
export function createAuthMetrics(options: { defaultMetrics: boolean }): AuthMetrics {
  const metrics = createAppMetrics(options);
  const issued = new Counter({
    name: 'oauth_tokens_issued_total',
    help: 'Successful token endpoint responses by grant type',
    labelNames: ['grant_type'] as const,
    registers: [metrics.registry],
  });
  const reuse = new Counter({
    name: 'oauth_refresh_reuse_detected_total',
    help: 'Rotated refresh tokens presented again (the grant was revoked)',
    registers: [metrics.registry],
  });
  return {
    ...metrics,
    grants: {
      tokenIssued: (grantType) => issued.inc({ grant_type: GRANT_TYPES[grantType] ?? 'other' }),
      refreshReuse: () => reuse.inc(),
    },
  };
}

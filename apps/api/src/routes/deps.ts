import type { SharedDenyList } from '@portcullis/db';
import type { ReadinessReport } from '@portcullis/observability';
import type { Logger } from 'pino';
import type { CredentialServices } from '../auth/credentials.js';
import type { Repos } from '../data/index.js';
import type { EventBus } from '../events/bus.js';
import type { CursorCodec } from '../http/cursor.js';
import type { PaymentProvider } from '../payments/provider.js';
import type { BlobStorage } from '../storage/storage.js';

/** What route modules may use: repos and services, never the database handle. */
export interface RouteDeps {
  repos: Repos;
  logger: Logger;
  clock: () => Date;
  userCursors: CursorCodec;
  /** Readiness: database and, with REDIS_URL, Redis, each bounded by a short timeout. */
  checkReady: () => Promise<ReadinessReport>;
  /** Rate limiters and deny-list writer; optional only so route-table tests can mount routes. */
  credentials?: CredentialServices;
  paymentProvider: PaymentProvider;
  /** Outbox events as they commit, on any instance (GET /stream). */
  eventBus: EventBus;
  /** Revocations as the deny list learns of them: GET /stream ends revoked streams. */
  onRevocation?: SharedDenyList['onRevocation'] | undefined;
  storage: BlobStorage;
  /** The API's registered permissions now (the catalogue's): its RFC 9728 `scopes_supported`. */
  registeredPermissions?: (() => readonly string[]) | undefined;
}

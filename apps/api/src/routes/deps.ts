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
  /** Wall clock for timestamps; tests may freeze it. */
  clock: () => Date;
  userCursors: CursorCodec;
  /** Readiness: database and, with REDIS_URL, Redis, each bounded by a short timeout. */
  checkReady: () => Promise<ReadinessReport>;
  /**
   * Rate limiters and the deny-list writer of /login and /logout/all. createApiApp always
   * sets it; optional so route-table tests can mount the routes without them.
   */
  credentials?: CredentialServices;
  // Payments, events, uploads.
  paymentProvider: PaymentProvider;
  /** Outbox events as they commit, on any instance (GET /stream). */
  eventBus: EventBus;
  /** Revocations as the deny list learns of them: GET /stream ends revoked streams. */
  onRevocation?: SharedDenyList['onRevocation'] | undefined;
  storage: BlobStorage;
}

import { createAccountsRepo, type AccountsRepo } from '@portcullis/accounts';
import type { Db } from '@portcullis/db';
import { createApiKeysRepo, type ApiKeysRepo } from './api-keys-repo.js';
import { createEventsRepo, withUserDeletedEvent, type EventsRepo } from './events-repo.js';
import { createIdempotencyRepo, type IdempotencyRepo } from './idempotency-repo.js';
import { createOrdersRepo, type OrdersRepo } from './orders-repo.js';
import { createPaymentsRepo, type PaymentsRepo } from './payments-repo.js';
import { createSecretsRepo, type SecretsRepo } from './secrets-repo.js';
import { createSessionsRepo, type SessionsRepo } from './sessions-repo.js';
import { createUploadsRepo, type UploadsRepo } from './uploads-repo.js';

/** Every data module of the API, gathered once; handlers receive this, never knex. */
export interface Repos {
  orders: OrdersRepo;
  accounts: AccountsRepo;
  secrets: SecretsRepo;
  sessions: SessionsRepo;
  apiKeys: ApiKeysRepo;
  // Payments, events, uploads.
  payments: PaymentsRepo;
  idempotency: IdempotencyRepo;
  events: EventsRepo;
  uploads: UploadsRepo;
}

export function createRepos(db: Db): Repos {
  return {
    orders: createOrdersRepo(db),
    // Deleting a user writes `user.deleted` in the same transaction.
    accounts: withUserDeletedEvent(createAccountsRepo(db), db, createAccountsRepo),
    secrets: createSecretsRepo(db),
    sessions: createSessionsRepo(db),
    apiKeys: createApiKeysRepo(db),
    payments: createPaymentsRepo(db),
    idempotency: createIdempotencyRepo(db),
    events: createEventsRepo(db),
    uploads: createUploadsRepo(db),
  };
}

import {
  createAccountTokens,
  createAccountsRepo,
  type AccountTokens,
  type AccountsRepo,
} from '@portcullis/accounts';
import {
  createRevocationStore,
  createResourceStore,
  createRoleStore,
  type Db,
  type RevocationStore,
  type ResourceStore,
  type RoleStore,
} from '@portcullis/db';
import { createAuditRepo, type AuditRepo } from './audit-repo.js';
import { createClientsRepo, type ClientsRepo } from './clients-repo.js';
import { createDevicePollsRepo, type DevicePollsRepo } from './device-polls-repo.js';
import { createMfaRepo, type MfaRepo } from './mfa-repo.js';
import { createOidcPayloadsRepo, type OidcPayloadsRepo } from './oidc-payloads-repo.js';
import { createPasskeysRepo, type PasskeysRepo } from './passkeys-repo.js';
import { createPersonalDataRepo, type PersonalDataRepo } from './personal-data-repo.js';
import { createUserSessionsRepo, type UserSessionsRepo } from './user-sessions-repo.js';
import { createSigningKeysRepo, type SigningKeysRepo } from './signing-keys-repo.js';
import { createMailOutboxRepo, type MailOutboxRepo } from './mail-outbox-repo.js';

/** Every data module of the auth server, gathered once; the rest receives this, never knex. */
export interface Repos {
  accounts: AccountsRepo;
  /** Single-use links and codes mailed to people (reset, verification, e-mail change). */
  accountTokens: AccountTokens;
  clients: ClientsRepo;
  audit: AuditRepo;
  /** Sealed with KEY_ENCRYPTION_KEY. */
  signingKeys: SigningKeysRepo;
  /** oidc-provider's artifacts, its replay claims and their purge. */
  oidcPayloads: OidcPayloadsRepo;
  devicePolls: DevicePollsRepo;
  /** Revoked grants and subjects (logout everywhere), read by the deny list. */
  revocations: RevocationStore;
  mfa: MfaRepo;
  passkeys: PasskeysRepo;
  /** A user's live sessions and grants (the account page, the admin API). */
  userSessions: UserSessionsRepo;
  /** A user's orders and payments, and closing an account. */
  personalData: PersonalDataRepo;
  /** Roles and the permissions they grant (docs/roles.md). */
  roles: RoleStore;
  /** The registered APIs and their permissions (docs/roles.md). */
  resources: ResourceStore;
  /** Mail waiting to be sent, and requests to compose one (identity/mail/outbox.ts). */
  mailOutbox: MailOutboxRepo;
  /** Readiness: the database answers. */
  ping(): Promise<unknown>;
}

export function createRepos(db: Db, secrets: { keyEncryptionKey: Buffer }): Repos {
  const clients = createClientsRepo(db);
  return {
    accounts: createAccountsRepo(db),
    accountTokens: createAccountTokens(db),
    clients,
    audit: createAuditRepo(db),
    signingKeys: createSigningKeysRepo(db, secrets.keyEncryptionKey),
    oidcPayloads: createOidcPayloadsRepo(db, clients),
    devicePolls: createDevicePollsRepo(db),
    revocations: createRevocationStore(db),
    mfa: createMfaRepo(db),
    passkeys: createPasskeysRepo(db),
    userSessions: createUserSessionsRepo(db),
    personalData: createPersonalDataRepo(db),
    roles: createRoleStore(db),
    resources: createResourceStore(db),
    mailOutbox: createMailOutboxRepo(db),
    ping: () => db.raw('select 1'),
  };
}

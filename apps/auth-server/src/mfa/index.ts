import type Router from '@koa/router';
import type { AccountsRepo, SignInLimiter } from '@portcullis/accounts';
import type { Context, Middleware } from 'koa';
import type { Interaction } from 'oidc-provider';
import type { Logger } from 'pino';
import type { AuditRepo } from '../data/audit-repo.js';
import type { MfaRepo } from '../data/mfa-repo.js';
import type { ProviderHost } from '../provider/provider-host.js';
import { accountRoutes, createAccountOf } from './account-routes.js';
import { createFactorChanges } from './factor-changes.js';
import { createFactorRegistry, type FactorKind, type FactorRegistry } from './factors.js';
import { createRecoveryCodes } from './recovery-codes.js';
import { renderFactorPage, secondFactorRoutes } from './second-factor-routes.js';
import {
  createCompleteSignIn,
  createFinishSignIn,
  createPendingSignIn,
  createSecondFactorPolicy,
  type CompleteSignIn,
  type PendingSignIn,
  type SecondFactorPolicy,
} from './sign-in.js';
import { createTotpService } from './totp.js';

export { ACCOUNT_CLIENT_ID, accountClientMetadata } from './account-routes.js';
export type { FactorKind, FactorRegistry, FactorSummary } from './factors.js';
export {
  AMR,
  signInClass,
  type CompleteSignIn,
  type PendingSignIn,
  type SecondFactorPolicy,
  type SignInResult,
} from './sign-in.js';

/** The factor kinds and the policy: built before the provider, which checks the policy. */
export interface MfaCore {
  repo: MfaRepo;
  factors: FactorRegistry;
  policy: SecondFactorPolicy;
}

/** The authenticator app as a factor kind. */
function totpFactor(repo: MfaRepo): FactorKind {
  return {
    kind: 'totp',
    async list(userId) {
      const totp = await repo.findTotp(userId);
      if (!totp?.confirmedAt) return [];
      return [
        {
          kind: 'totp',
          id: 'totp',
          name: 'Authenticator app',
          createdAt: totp.confirmedAt,
          lastUsedAt: totp.lastUsedAt,
        },
      ];
    },
    async removeAll(userId) {
      const confirmed = (await repo.findTotp(userId))?.confirmedAt;
      return (await repo.deleteTotp(userId)) && confirmed ? 1 : 0;
    },
  };
}

export function createMfaCore(repo: MfaRepo): MfaCore {
  const factors = createFactorRegistry();
  factors.register(totpFactor(repo));
  return { repo, factors, policy: createSecondFactorPolicy(factors) };
}

export interface MfaParts {
  core: MfaCore;
  host: ProviderHost;
  accounts: AccountsRepo;
  audit: AuditRepo;
  logger: Logger;
  /** KEY_ENCRYPTION_KEY: TOTP secrets are sealed with it. */
  keyEncryptionKey: Buffer;
  /**
   * Second-factor codes (and enrolment confirmations) per IP and per user: the sign-in
   * limiter of packages/accounts under a key prefix of its own (README "Multi-factor sign-in").
   */
  limiter: SignInLimiter;
  csrfKey: string;
  csrfToken(uid: string): string;
  checkCsrf(uid: string, presented: unknown): boolean;
  /** Milliseconds clock TOTP codes are checked against; default Date.now. */
  now?: (() => number) | undefined;
}

/** What the interaction pages and the passkey routes use of the second factor. */
export interface MfaStep {
  completeSignIn: CompleteSignIn;
  pendingOf(interaction: Interaction): Promise<PendingSignIn | undefined>;
  renderFactorPage(ctx: Context, interaction: Interaction, pending: PendingSignIn): Promise<void>;
  /** The account page's user, only when freshly signed in (passkeys' enrolment). */
  accountOf(
    ctx: Context,
  ): Promise<{ user: { id: string; email: string }; csrf: string } | undefined>;
  /** Mounts the factor step's and the account page's routes. */
  routes(router: Router, form: Middleware): void;
}

export function createMfaStep(parts: MfaParts): MfaStep {
  const { core } = parts;
  const totp = createTotpService(core.repo, parts.keyEncryptionKey, parts.now);
  const recoveryCodes = createRecoveryCodes(core.repo);
  const pendingSignInOf = createPendingSignIn(parts.host);
  const finishSignIn = createFinishSignIn({
    host: parts.host,
    policy: core.policy,
    pendingSignInOf,
  });
  const completeSignIn = createCompleteSignIn(finishSignIn, parts.host);
  const factorChanges = createFactorChanges({
    hasSecondFactor: (userId) => core.factors.hasSecondFactor(userId),
    recoveryCodes,
    audit: parts.audit,
  });
  const stepDeps = {
    host: parts.host,
    factors: core.factors,
    totp,
    recoveryCodes,
    factorChanges,
    completeSignIn,
    pendingSignInOf,
    limiter: parts.limiter,
    audit: parts.audit,
    accounts: parts.accounts,
    logger: parts.logger,
    csrfToken: parts.csrfToken,
    checkCsrf: parts.checkCsrf,
  };
  const accountDeps = {
    host: parts.host,
    accounts: parts.accounts,
    audit: parts.audit,
    factors: core.factors,
    totp,
    recoveryCodes,
    factorChanges,
    limiter: parts.limiter,
    csrfKey: parts.csrfKey,
  };
  const accountOf = createAccountOf(accountDeps);
  return {
    completeSignIn,
    pendingOf: pendingSignInOf,
    renderFactorPage: (ctx, interaction, pending) =>
      renderFactorPage(ctx, stepDeps, interaction, pending),
    async accountOf(ctx) {
      const account = await accountOf(ctx);
      return account?.fresh ? { user: account.user, csrf: account.csrf } : undefined;
    },
    routes(router, form) {
      secondFactorRoutes(router, stepDeps, form);
      accountRoutes(router, accountDeps, form);
    },
  };
}

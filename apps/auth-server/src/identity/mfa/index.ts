import type { UiFactory } from '../ui/index.js';
import type Router from '@koa/router';
import type { AccountsRepo, SignInLimiter, SignupVerify } from '@portcullis/accounts';
import { verifiedAddressCheck } from '../self-service/signup-doors.js';
import type { Context } from 'koa';
import type { ClientMetadata, Interaction, interactionPolicy } from 'oidc-provider';
import type { Logger } from 'pino';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { MfaRepo } from '../../data/mfa-repo.js';
import type { PasskeysRepo } from '../../data/passkeys-repo.js';
import { formBody } from '../../kernel/form-body.js';
import { accountClientMetadata, accountRoutes, createAccountOf } from '../account/account-page.js';
import { createFactorChanges } from './factor-changes.js';
import { createFactorRegistry, type FactorKind, type FactorRegistry } from './factors.js';
import { createPasskeyFactor } from './passkeys-factor.js';
import { passkeyConfigFor, createPasskeyService } from './passkeys.js';
import { passkeyRoutes } from './passkeys-routes.js';
import type { CurrentProvider } from './provider-access.js';
import { createRecoveryCodes } from './recovery-codes.js';
import { renderFactorPage, secondFactorRoutes } from './second-factor-routes.js';
import {
  createCompleteSignIn,
  createFinishSignIn,
  createPendingSignIn,
  createSecondFactorPolicy,
  interactionPolicyWithSecondFactor,
  type CompleteSignIn,
  type PendingSignIn,
  type SecondFactorPolicy,
} from './sign-in.js';
import { createTotpService } from './totp.js';

export { ACCOUNT_CLIENT_ID, accountClientMetadata } from '../account/account-page.js';
export type { FactorKind, FactorRegistry, FactorSummary } from './factors.js';
export {
  AMR,
  signInClass,
  type CompleteSignIn,
  type PendingSignIn,
  type SecondFactorPolicy,
  type SignInResult,
} from './sign-in.js';
import type { EndCredentials } from '../self-service/end-credentials.js';

/** The factor kinds and the policy (the admin API lists and resets factors with these). */
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

export interface MfaDeps {
  repos: { mfa: MfaRepo; passkeys: PasskeysRepo };
  accounts: AccountsRepo;
  audit: AuditRepo;
  logger: Logger;
  /** KEY_ENCRYPTION_KEY: TOTP secrets are sealed with it. */
  keyEncryptionKey: Buffer;
  /** Second-factor codes per IP and per user: the sign-in limiter under its own key prefix. */
  limiter: SignInLimiter;
  /** WEBAUTHN_RP_ID; default the issuer's host. */
  rpId: string | undefined;
  /** Milliseconds clock TOTP codes are checked against; default Date.now. */
  now?: (() => number) | undefined;
  /** SIGNUP_VERIFY: every sign-in of an unverified address is refused under before-sign-in. */
  signupVerify?: SignupVerify | undefined;
}

/** What the routes need of the app: the running provider and the interaction CSRF tokens. */
export interface MfaRouteParts {
  host: CurrentProvider;
  csrfKey: string;
  csrfToken(uid: string): string;
  checkCsrf(uid: string, presented: unknown): boolean;
  /** The pages' language and brand. */
  ui: UiFactory;
  /** What removing a factor ends (self-service/end-credentials.ts). */
  endCredentials: EndCredentials;
}

/** What the sign-in pages use of the second factor. */
export interface MfaStep {
  /** The one way a sign-in ends (README "Multi-factor sign-in"). */
  completeSignIn: CompleteSignIn;
  pendingOf(interaction: Interaction): Promise<PendingSignIn | undefined>;
  renderFactorPage(ctx: Context, interaction: Interaction, pending: PendingSignIn): Promise<void>;
}

/** Multi-factor sign-in, whole: its policy for the provider and its routes for the app. */
export interface Mfa extends MfaCore {
  /** oidc-provider's interaction policy with the second-factor check (a new one per Provider). */
  interactionPolicy(): interactionPolicy.DefaultPolicy;
  /** The account page's own client, a static client of the provider. */
  staticClients(issuer: string): ClientMetadata[];
  /** Mounts the factor step, the account page and the passkeys; returns what sign-in uses. */
  routes(router: Router, parts: MfaRouteParts): MfaStep;
}

export function createMfa(deps: MfaDeps): Mfa {
  const repo = deps.repos.mfa;
  const factors = createFactorRegistry();
  factors.register(totpFactor(repo));
  factors.register(createPasskeyFactor(deps.repos.passkeys));
  const policy = createSecondFactorPolicy(factors);
  const totp = createTotpService(repo, deps.keyEncryptionKey, deps.now);
  const recoveryCodes = createRecoveryCodes(repo);
  const factorChanges = createFactorChanges({
    hasSecondFactor: (userId) => factors.hasSecondFactor(userId),
    recoveryCodes,
    audit: deps.audit,
  });
  const form = formBody('16kb');

  function routes(router: Router, parts: MfaRouteParts): MfaStep {
    const { host } = parts;
    const pendingSignInOf = createPendingSignIn(host);
    const admit = verifiedAddressCheck(deps.accounts, deps.signupVerify ?? 'before-sign-in');
    const finishSignIn = createFinishSignIn({ host, policy, pendingSignInOf, admit });
    const completeSignIn = createCompleteSignIn(finishSignIn, host, parts.ui);
    const shared = {
      host,
      factors,
      totp,
      recoveryCodes,
      factorChanges,
      limiter: deps.limiter,
      audit: deps.audit,
      accounts: deps.accounts,
      ui: parts.ui,
      endCredentials: parts.endCredentials,
    };
    const stepDeps = {
      ...shared,
      completeSignIn,
      pendingSignInOf,
      logger: deps.logger,
      csrfToken: parts.csrfToken,
      checkCsrf: parts.checkCsrf,
    };
    const accountDeps = { ...shared, csrfKey: parts.csrfKey };
    const accountOf = createAccountOf(accountDeps);
    secondFactorRoutes(router, stepDeps, form);
    accountRoutes(router, accountDeps, form);
    passkeyRoutes(router, {
      passkeys: createPasskeyService(
        deps.repos.passkeys,
        passkeyConfigFor(host.current.issuer, deps.rpId),
      ),
      repo: deps.repos.passkeys,
      audit: deps.audit,
      logger: deps.logger,
      interactionOf: (ctx) => host.current.interactionDetails(ctx.req, ctx.res),
      checkCsrf: parts.checkCsrf,
      pendingUserOf: async (interaction) => (await pendingSignInOf(interaction))?.accountId,
      completeSignIn,
      async accountOf(ctx) {
        const account = await accountOf(ctx);
        return account?.fresh ? { user: account.user, csrf: account.csrf } : undefined;
      },
      accounts: deps.accounts,
      hasSecondFactor: (userId) => factors.hasSecondFactor(userId),
      factorChanges,
      ui: parts.ui,
      endCredentials: parts.endCredentials,
    });
    return {
      completeSignIn,
      pendingOf: pendingSignInOf,
      renderFactorPage: (ctx, interaction, pending) =>
        renderFactorPage(ctx, stepDeps, interaction, pending),
    };
  }

  return {
    repo,
    factors,
    policy,
    interactionPolicy: () => interactionPolicyWithSecondFactor(policy),
    staticClients: (issuer) => [accountClientMetadata(issuer)],
    routes,
  };
}

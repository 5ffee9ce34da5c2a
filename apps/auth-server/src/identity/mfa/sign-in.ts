import { ACR, acrSatisfies } from '@portcullis/claims';
import type { Context } from 'koa';
import { interactionPolicy, type Interaction, type KoaContextWithOIDC } from 'oidc-provider';
import { AuthServerError } from '../../kernel/errors.js';
import type { CurrentProvider } from './provider-access.js';
import { htmlHeaders, httpOrigins } from '../../kernel/security-headers.js';
import type { FactorRegistry } from './factors.js';
import { recoveryCodesPage } from './views.js';
import { translated } from '../ui/html.js';
import type { UiFactory } from '../ui/index.js';

/** A sign-in's RFC 8176 `amr` and its `acr` (docs/security.md "Sign-in factors: amr and acr"). */
export const AMR = {
  password: 'pwd',
  otp: 'otp',
  hardwareKey: 'hwk',
  softwareKey: 'swk',
  mfa: 'mfa',
} as const;

const POSSESSION: readonly string[] = [AMR.otp, AMR.hardwareKey, AMR.softwareKey];

/** The amr (with `mfa` added for a password and a possession factor) and the acr it earns. */
export function signInClass(amr: readonly string[]): { acr: string; amr: string[] } {
  const all = [...new Set(amr)];
  if (all.includes(AMR.password) && all.some((m) => POSSESSION.includes(m))) all.push(AMR.mfa);
  const unique = [...new Set(all)];
  return { acr: unique.includes(AMR.mfa) ? ACR.mfa : ACR.password, amr: unique };
}

type ClientLike = { metadata(): Record<string, unknown> } | undefined;

/** Client metadata `require_mfa: true` (POST /admin/clients): every sign-in needs a second factor. */
export const clientRequiresMfa = (client: ClientLike) => client?.metadata()['require_mfa'] === true;

/** `acr_values` asking for ACR.mfa only: honoured over any session (OIDC Core §3.1.2.1). */
export function acrValuesAskMfa(params: Record<string, unknown> | undefined): boolean {
  const raw = params?.['acr_values'];
  if (typeof raw !== 'string') return false;
  const asked = raw.split(' ').filter(Boolean);
  return asked.includes(ACR.mfa) && !asked.some((v) => !acrSatisfies(v, ACR.mfa));
}

export interface SecondFactorPolicy {
  /** Whether a sign-in of `accountId` for this client and request needs a second factor. */
  required(
    accountId: string,
    client: ClientLike,
    params: Record<string, unknown> | undefined,
  ): Promise<boolean>;
}

/** An enrolled user always; any user of a `require_mfa` client, or asked by acr_values. */
export function createSecondFactorPolicy(factors: FactorRegistry): SecondFactorPolicy {
  return {
    async required(accountId, client, params) {
      if (clientRequiresMfa(client) || acrValuesAskMfa(params)) return true;
      return factors.hasSecondFactor(accountId);
    },
  };
}

export const SECOND_FACTOR_REASON = 'second_factor';

/** oidc-provider's policy, plus: a session lacking a required second factor logs in again. */
export function interactionPolicyWithSecondFactor(policy: SecondFactorPolicy) {
  const base = interactionPolicy.base();
  base.get('login')!.checks.add(
    new interactionPolicy.Check(
      SECOND_FACTOR_REASON,
      'a second sign-in factor is required',
      'login_required',
      async (ctx: KoaContextWithOIDC) => {
        const { session, client, params } = ctx.oidc;
        if (!session?.accountId || acrSatisfies(session.acr, ACR.mfa)) return false;
        return policy.required(session.accountId, client as ClientLike, params);
      },
    ),
  );
  return base;
}

/** A sign-in that passed its first factor and owes the second. */
export interface PendingSignIn {
  accountId: string;
  amr: string[];
}

const PENDING = 'portcullis_second_factor';

/** How long a sign-in counts as fresh (for factor changes and as a step-up's first factor). */
export const FRESH_SIGN_IN_SECONDS = 5 * 60;

/** Whether a session signed in at `loginTs` (seconds) is still fresh. */
export const signedInWithin = (loginTs: number | undefined, now = Date.now()) =>
  typeof loginTs === 'number' && Math.floor(now / 1000) - loginTs <= FRESH_SIGN_IN_SECONDS;

/** The pending second-factor step of an interaction, if it is at one (createPendingSignIn). */
export type PendingSignInOf = (interaction: Interaction) => Promise<PendingSignIn | undefined>;

/**
 * The pending second-factor step; a stale session's first factor does not count
 * (docs/security.md "Sign-in factors: amr and acr").
 */
export function createPendingSignIn(host: CurrentProvider): PendingSignInOf {
  return async function pendingSignInOf(interaction) {
    if (interaction.prompt.name !== 'login') return undefined;
    const stored = (interaction.result as Record<string, unknown> | undefined)?.[PENDING] as
      PendingSignIn | undefined;
    if (stored && typeof stored.accountId === 'string') return stored;
    const reasons = interaction.prompt.reasons;
    const started = interaction.session;
    if (!started?.accountId || !started.cookie) return undefined;
    if (reasons.length === 0 || reasons.some((r) => r !== SECOND_FACTOR_REASON)) return undefined;
    const session = await host.current.Session.find(started.cookie);
    if (session?.accountId !== started.accountId || !signedInWithin(session.loginTs))
      return undefined;
    return { accountId: started.accountId, amr: session.amr ?? [AMR.password] };
  };
}

/** What a step of a sign-in proved: whose it is and the factors given (RFC 8176 amr). */
export interface SignInResult {
  accountId: string;
  amr: string[];
  /** Recovery codes made by a factor enrolled at this step: shown once instead of the redirect. */
  /** `intro`: the catalogue key of the line above the codes (docs/ui.md). */
  recoveryCodes?: { codes: string[]; intro: string } | undefined;
}

export type CompleteSignIn = (
  ctx: Context,
  interaction: Interaction,
  result: SignInResult,
) => Promise<void>;

/** completeSignIn without the redirect: where the browser goes next. */
export type FinishSignIn = (
  interaction: Interaction,
  result: { accountId: string; amr: string[] },
) => Promise<string>;

/** A form posted where this sign-in cannot take it; its message is the page's text. */
export class SignInStepError extends AuthServerError {
  constructor(message: string, key: string) {
    super(message, { status: 400, expose: true, uiText: { key } });
  }
}

/** The one place a finished sign-in becomes oidc-provider's login result (or a factor page). */
export function createFinishSignIn(deps: {
  host: CurrentProvider;
  policy: SecondFactorPolicy;
  pendingSignInOf: PendingSignInOf;
  /** Throws when the account may not sign in at all yet (an unverified address). */
  admit?: ((accountId: string) => Promise<void>) | undefined;
}): FinishSignIn {
  return async function finishSignIn(interaction, { accountId, amr }) {
    if (interaction.prompt.name !== 'login')
      throw new SignInStepError(
        'This page is not part of a sign-in in progress. Start again from the application.',
        'signin:notInProgress',
      );
    await deps.admit?.(accountId);
    const pending = await deps.pendingSignInOf(interaction);
    if (pending && pending.accountId !== accountId)
      throw new SignInStepError(
        'This sign-in belongs to another account: finish it with that account’s factor, or start again from the application.',
        'signin:otherAccount',
      );
    const signIn = signInClass([...(pending?.amr ?? []), ...amr]);
    const remaining = interaction.exp - Math.floor(Date.now() / 1000);
    if (signIn.acr !== ACR.mfa) {
      const client = await deps.host.current.Client.find(String(interaction.params['client_id']));
      if (await deps.policy.required(accountId, client, interaction.params)) {
        interaction.result = { [PENDING]: { accountId, amr: signIn.amr } } as never;
        await interaction.save(remaining);
        return `/interaction/${interaction.uid}`;
      }
    }
    // As oidc-provider's interactionResult does, on the interaction this request read.
    interaction.result = { login: { accountId, acr: signIn.acr, amr: signIn.amr } };
    await interaction.save(remaining);
    return interaction.returnTo;
  };
}

export function createCompleteSignIn(
  finishSignIn: FinishSignIn,
  host: CurrentProvider,
  uiFactory: UiFactory,
): CompleteSignIn {
  return async function completeSignIn(ctx, interaction, result) {
    const to = await finishSignIn(interaction, result);
    if (!result.recoveryCodes) {
      ctx.redirect(to);
      ctx.status = 303;
      return;
    }
    const { codes, intro } = result.recoveryCodes;
    // The link ends at the client's redirect_uri, as the factor page's forms do.
    const client = await host.current.Client.find(String(interaction.params['client_id']));
    const ui = uiFactory.of(ctx, interaction.params['ui_locales']);
    htmlHeaders(ctx, httpOrigins(client?.redirectUris), { ui });
    ctx.status = 200;
    ctx.type = 'html';
    const t = translated(ui.t);
    ctx.body = recoveryCodesPage(ui, codes, t(intro), {
      href: to,
      label: t('common:continue'),
    }).toString();
  };
}

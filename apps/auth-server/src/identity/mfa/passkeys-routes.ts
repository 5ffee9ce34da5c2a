import { readFileSync } from 'node:fs';
import { constantTimeEqual } from '@portcullis/observability';
import type Router from '@koa/router';
import type { AccountsRepo } from '@portcullis/accounts';
import type { Context } from 'koa';
import type { Interaction } from 'oidc-provider';
import type { Logger } from 'pino';
import type { AuditRepo } from '../../data/audit-repo.js';
import type { PasskeysRepo } from '../../data/passkeys-repo.js';
import { formBody } from '../../kernel/form-body.js';
import { htmlHeaders } from '../../kernel/security-headers.js';
import { page } from '../interactions/views.js';
import { markup, translated, type SafeHtml } from '../ui/html.js';
import type { FactorChanges } from './factor-changes.js';
import {
  PasskeyError,
  PASSKEY_NAME_MAX,
  type PasskeyService,
  type PasskeyUser,
} from './passkeys.js';
import { PASSKEY_SCRIPT_PATH } from './passkeys-views.js';
import type { SignInResult } from './sign-in.js';
import { recoveryCodesPage } from './views.js';
import type { Ui, UiFactory } from '../ui/index.js';
import type { EndCredentials } from '../self-service/end-credentials.js';

/** The signed-in user of the account page, with the page's CSRF token; undefined: not signed in. */
export type AccountOf = (ctx: Context) => Promise<{ user: PasskeyUser; csrf: string } | undefined>;

export interface PasskeyRouteDeps {
  passkeys: PasskeyService;
  repo: PasskeysRepo;
  audit: AuditRepo;
  logger: Logger;
  /** The interaction of this request (oidc-provider's interactionDetails). */
  interactionOf(ctx: Context): Promise<Interaction>;
  /** Whether the form's CSRF token belongs to this interaction. */
  checkCsrf(uid: string, presented: unknown): boolean;
  /** The user who passed the password and owes a second factor; undefined at the first step. */
  pendingUserOf(interaction: Interaction): Promise<string | undefined>;
  /** Ends the sign-in: oidc-provider's login result with the amr the passkey earned. */
  completeSignIn(ctx: Context, interaction: Interaction, result: SignInResult): Promise<void>;
  /** The account page's user (a fresh sign-in), for enrolment. */
  accountOf: AccountOf;
  /** Users, for the name and email of a passkey set up at the factor page. */
  accounts: Pick<AccountsRepo, 'findById'>;
  /** Whether the user has any second factor (then none is added at a sign-in). */
  hasSecondFactor(userId: string): Promise<boolean>;
  /** Recovery codes with the first factor, gone with the last. */
  factorChanges: FactorChanges;
  /** The pages' language and brand. */
  ui: UiFactory;
  /** A passkey removed ends the other sessions and pending changes (self-service/end-credentials.ts). */
  endCredentials: EndCredentials;
}

const SCRIPT = readFileSync(new URL('../../../public/passkeys.js', import.meta.url));

/** RFC 8176 amr of a passkey: `hwk` bound to one device, `swk` synced; with UV also `mfa`. */
export function passkeyAmr(
  deviceType: 'singleDevice' | 'multiDevice',
  userVerified: boolean,
): string[] {
  return [deviceType === 'multiDevice' ? 'swk' : 'hwk', ...(userVerified ? ['mfa'] : [])];
}

export function passkeyRoutes(router: Router, deps: PasskeyRouteDeps): void {
  // A registration response with attestation `none` is about 1 kB; room for larger ones.
  const form = formBody('64kb');
  const field = (ctx: Context, name: string) => {
    const value = (ctx.request.body as Record<string, unknown> | undefined)?.[name];
    return typeof value === 'string' ? value : '';
  };

  /** A sign-in's page language (its ui_locales first); the account page's: Accept-Language. */
  const uiOf = (ctx: Context, interaction?: Interaction): Ui =>
    deps.ui.of(ctx, interaction?.params['ui_locales']);

  /** `description`: text the page script shows (a `ui.t(…)` result, not HTML). */
  function jsonError(ctx: Context, status: number, description: string) {
    ctx.status = status;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { error: 'invalid_request', error_description: description };
  }

  function failurePage(ctx: Context, ui: Ui, status: number, message: SafeHtml, back: string) {
    htmlHeaders(ctx, [], { ui });
    ctx.status = status;
    ctx.type = 'html';
    const t = translated(ui.t);
    ctx.body = page(
      ui,
      t('mfa:passkey.notAccepted'),
      markup`<p class="error" role="alert">${message}</p><p><a href="${back}">${t('common:goBack')}</a></p>`,
    ).toString();
  }

  const errorText = (ui: Ui, error: PasskeyError) =>
    ui.t(error.uiText!.key, error.uiText!.values ?? {});
  const errorHtml = (ui: Ui, error: PasskeyError) =>
    translated(ui.t)(error.uiText!.key, error.uiText!.values ?? {});

  router.get(PASSKEY_SCRIPT_PATH, function passkeyScript(ctx) {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = SCRIPT;
  });

  // --- sign-in: alone at the login step, or as the second factor -------------------------

  router.post('/interaction/:uid/passkey/options', form, async function passkeySignInOptions(ctx) {
    const interaction = await deps.interactionOf(ctx);
    const ui = uiOf(ctx, interaction);
    if (!deps.checkCsrf(interaction.uid, field(ctx, 'csrf'))) {
      jsonError(ctx, 403, ui.t('mfa:passkey.formExpiredReload'));
      return;
    }
    if (interaction.prompt.name !== 'login') {
      jsonError(ctx, 400, ui.t('mfa:passkey.notAtSignIn'));
      return;
    }
    const userId = await deps.pendingUserOf(interaction);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await deps.passkeys.authenticationOptions(`interaction:${interaction.uid}`, userId);
  });

  router.post('/interaction/:uid/passkey', form, async function submitPasskeySignIn(ctx) {
    const interaction = await deps.interactionOf(ctx);
    const back = `/interaction/${interaction.uid}`;
    const ui = uiOf(ctx, interaction);
    if (!deps.checkCsrf(interaction.uid, field(ctx, 'csrf'))) {
      failurePage(ctx, ui, 403, translated(ui.t)('common:formExpired'), back);
      return;
    }
    if (interaction.prompt.name !== 'login') ctx.throw(400, 'not a login step');
    const pending = await deps.pendingUserOf(interaction);
    try {
      const { passkey, userVerified } = await deps.passkeys.authenticate(
        `interaction:${interaction.uid}`,
        field(ctx, 'response'),
      );
      if (!pending && !userVerified) throw new PasskeyError('verification_failed');
      await deps.completeSignIn(ctx, interaction, {
        accountId: passkey.userId,
        amr: passkeyAmr(passkey.deviceType, userVerified),
      });
    } catch (error) {
      if (!(error instanceof PasskeyError)) throw error;
      deps.logger.warn(
        { event: 'passkey_refused', reason: error.code, ip: ctx.ip },
        'passkey sign-in refused',
      );
      await deps.audit.record({
        kind: 'passkey_refused',
        ...(pending ? { subject: pending } : {}),
        detail: { reason: error.code, ip: ctx.ip },
      });
      failurePage(ctx, ui, error.status, errorHtml(ui, error), back);
    }
  });

  // --- set-up at the factor page: a user asked for a second factor who has none ----------

  /** The pending user, who may add a passkey here only when they have no second factor at all. */
  async function setupUser(interaction: Interaction): Promise<PasskeyUser | undefined> {
    const pending = await deps.pendingUserOf(interaction);
    if (!pending || (await deps.hasSecondFactor(pending))) return undefined;
    return deps.accounts.findById(pending);
  }

  router.post(
    '/interaction/:uid/passkey/register/options',
    form,
    async function passkeySetupOptions(ctx) {
      const interaction = await deps.interactionOf(ctx);
      const ui = uiOf(ctx, interaction);
      if (!deps.checkCsrf(interaction.uid, field(ctx, 'csrf'))) {
        jsonError(ctx, 403, ui.t('mfa:passkey.formExpiredReload'));
        return;
      }
      const user = await setupUser(interaction);
      if (!user) {
        jsonError(ctx, 400, ui.t('mfa:passkey.noSetup'));
        return;
      }
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await deps.passkeys.registrationOptions(user, `interaction:${interaction.uid}`);
    },
  );

  router.post('/interaction/:uid/passkey/register', form, async function setupPasskey(ctx) {
    const interaction = await deps.interactionOf(ctx);
    const back = `/interaction/${interaction.uid}`;
    const ui = uiOf(ctx, interaction);
    if (!deps.checkCsrf(interaction.uid, field(ctx, 'csrf'))) {
      failurePage(ctx, ui, 403, translated(ui.t)('common:formExpired'), back);
      return;
    }
    const user = await setupUser(interaction);
    if (!user) {
      failurePage(ctx, ui, 400, translated(ui.t)('mfa:passkey.noSetup'), back);
      return;
    }
    try {
      const passkey = await deps.passkeys.register(
        user,
        `interaction:${interaction.uid}`,
        field(ctx, 'response'),
        field(ctx, 'name'),
      );
      await deps.audit.record({
        kind: 'passkey_added',
        subject: user.id,
        detail: { passkey: passkey.id, name: passkey.name, at_sign_in: true },
      });
      const codes = await deps.factorChanges.enrolled(user.id, false);
      // Making the passkey proved possession: with the password, two factors.
      await deps.completeSignIn(ctx, interaction, {
        accountId: user.id,
        amr: passkeyAmr(passkey.deviceType, false),
        recoveryCodes: codes && { codes, intro: 'mfa:passkeyReady' },
      });
    } catch (error) {
      if (!(error instanceof PasskeyError)) throw error;
      failurePage(ctx, ui, error.status, errorHtml(ui, error), back);
    }
  });

  // --- the account page: enrol, rename, remove ------------------------------------------

  /** The account page's user, freshly signed in, when the form carries its CSRF token. */
  async function signedIn(ctx: Context, json = false) {
    const account = await deps.accountOf(ctx);
    if (account && constantTimeEqual(account.csrf, field(ctx, 'csrf'))) return account.user;
    const ui = uiOf(ctx);
    if (json) jsonError(ctx, 403, ui.t('mfa:passkey.signInAgain'));
    else failurePage(ctx, ui, 403, translated(ui.t)('mfa:passkey.signInAgain'), '/account');
    return undefined;
  }

  const backToAccount = (ctx: Context) => {
    ctx.redirect('/account#passkeys');
    ctx.status = 303;
  };

  router.post('/account/passkeys/options', form, async function passkeyEnrolOptions(ctx) {
    const user = await signedIn(ctx, true);
    if (!user) return;
    try {
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await deps.passkeys.registrationOptions(user, `account:${user.id}`);
    } catch (error) {
      if (!(error instanceof PasskeyError)) throw error;
      jsonError(ctx, error.status, errorText(uiOf(ctx), error));
    }
  });

  router.post('/account/passkeys', form, async function enrolPasskey(ctx) {
    const user = await signedIn(ctx);
    if (!user) return;
    const hadFactor = await deps.hasSecondFactor(user.id);
    try {
      const passkey = await deps.passkeys.register(
        user,
        `account:${user.id}`,
        field(ctx, 'response'),
        field(ctx, 'name'),
      );
      await deps.audit.record({
        kind: 'passkey_added',
        subject: user.id,
        detail: { passkey: passkey.id, name: passkey.name },
      });
      const codes = await deps.factorChanges.enrolled(user.id, hadFactor);
      const ui = uiOf(ctx);
      const t = translated(ui.t);
      const ready = t('mfa:passkey.ready', { name: passkey.name });
      // A page, not the account page: after a first factor, that page wants a sign-in with it.
      htmlHeaders(ctx, [], { ui });
      ctx.status = 200;
      ctx.type = 'html';
      const body = codes
        ? recoveryCodesPage(ui, codes, ready)
        : page(
            ui,
            t('mfa:passkey.addedTitle'),
            markup`<p role="status">${ready}</p>
<p><a href="/account">${t('mfa:passkey.backToAccount')}</a></p>`,
          );
      ctx.body = body.toString();
    } catch (error) {
      if (!(error instanceof PasskeyError)) throw error;
      const ui = uiOf(ctx);
      failurePage(ctx, ui, error.status, errorHtml(ui, error), '/account');
    }
  });

  router.post('/account/passkeys/:id/rename', form, async function renamePasskey(ctx) {
    const user = await signedIn(ctx);
    if (!user) return;
    const name = field(ctx, 'name').trim();
    if (!name || name.length > PASSKEY_NAME_MAX) {
      const ui = uiOf(ctx);
      failurePage(
        ctx,
        ui,
        400,
        translated(ui.t)('mfa:passkey.nameLength', { max: PASSKEY_NAME_MAX }),
        '/account',
      );
      return;
    }
    if (!(await deps.repo.rename(user.id, String(ctx.params['id']), name))) {
      const ui = uiOf(ctx);
      failurePage(ctx, ui, 404, translated(ui.t)('mfa:passkey.noSuch'), '/account');
      return;
    }
    backToAccount(ctx);
  });

  router.post('/account/passkeys/:id/delete', form, async function removePasskey(ctx) {
    const user = await signedIn(ctx);
    if (!user) return;
    const id = String(ctx.params['id']);
    if (!(await deps.repo.remove(user.id, id))) {
      const ui = uiOf(ctx);
      failurePage(ctx, ui, 404, translated(ui.t)('mfa:passkey.noSuch'), '/account');
      return;
    }
    await deps.audit.record({ kind: 'passkey_removed', subject: user.id, detail: { passkey: id } });
    await deps.factorChanges.removed(user.id);
    await deps.endCredentials(user.id, { keep: ctx });
    backToAccount(ctx);
  });
}

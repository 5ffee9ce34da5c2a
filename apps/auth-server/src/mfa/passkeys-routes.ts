import { readFileSync } from 'node:fs';
import { constantTimeEqual } from '@portcullis/observability';
import type Router from '@koa/router';
import type { AccountsRepo } from '@portcullis/accounts';
import type { Context } from 'koa';
import type { Interaction } from 'oidc-provider';
import type { Logger } from 'pino';
import type { AuditRepo } from '../data/audit-repo.js';
import type { PasskeysRepo } from '../data/passkeys-repo.js';
import { formBody } from '../form-body.js';
import { htmlHeaders } from '../security-headers.js';
import { escapeHtml, page } from '../interactions/views.js';
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
}

const SCRIPT = readFileSync(new URL('../../public/passkeys.js', import.meta.url));

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

  function jsonError(ctx: Context, status: number, description: string) {
    ctx.status = status;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { error: 'invalid_request', error_description: description };
  }

  function failurePage(ctx: Context, status: number, message: string, back: string) {
    htmlHeaders(ctx);
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = page(
      'Passkey not accepted',
      `<p class="error" role="alert">${escapeHtml(message)}</p><p><a href="${escapeHtml(back)}">Go back</a></p>`,
    );
  }

  router.get(PASSKEY_SCRIPT_PATH, function passkeyScript(ctx) {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = SCRIPT;
  });

  // --- sign-in: alone at the login step, or as the second factor -------------------------

  router.post('/interaction/:uid/passkey/options', form, async function passkeySignInOptions(ctx) {
    const interaction = await deps.interactionOf(ctx);
    if (!deps.checkCsrf(interaction.uid, field(ctx, 'csrf'))) {
      jsonError(ctx, 403, 'the form expired; reload the page');
      return;
    }
    if (interaction.prompt.name !== 'login') {
      jsonError(ctx, 400, 'this sign-in is not at a sign-in step');
      return;
    }
    const userId = await deps.pendingUserOf(interaction);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await deps.passkeys.authenticationOptions(`interaction:${interaction.uid}`, userId);
  });

  router.post('/interaction/:uid/passkey', form, async function submitPasskeySignIn(ctx) {
    const interaction = await deps.interactionOf(ctx);
    const back = `/interaction/${interaction.uid}`;
    if (!deps.checkCsrf(interaction.uid, field(ctx, 'csrf'))) {
      failurePage(ctx, 403, 'The form expired. Go back and try again.', back);
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
      failurePage(ctx, error.status, error.message, back);
    }
  });

  // --- set-up at the factor page: a user asked for a second factor who has none ----------

  /** The pending user, who may add a passkey here only when they have no second factor at all. */
  async function setupUser(interaction: Interaction): Promise<PasskeyUser | undefined> {
    const pending = await deps.pendingUserOf(interaction);
    if (!pending || (await deps.hasSecondFactor(pending))) return undefined;
    return deps.accounts.findById(pending);
  }
  const NO_SETUP =
    'A passkey is added here only at a sign-in of an account without a second factor.';

  router.post(
    '/interaction/:uid/passkey/register/options',
    form,
    async function passkeySetupOptions(ctx) {
      const interaction = await deps.interactionOf(ctx);
      if (!deps.checkCsrf(interaction.uid, field(ctx, 'csrf'))) {
        jsonError(ctx, 403, 'the form expired; reload the page');
        return;
      }
      const user = await setupUser(interaction);
      if (!user) {
        jsonError(ctx, 400, NO_SETUP);
        return;
      }
      ctx.set('Cache-Control', 'no-store');
      ctx.body = await deps.passkeys.registrationOptions(user, `interaction:${interaction.uid}`);
    },
  );

  router.post('/interaction/:uid/passkey/register', form, async function setupPasskey(ctx) {
    const interaction = await deps.interactionOf(ctx);
    const back = `/interaction/${interaction.uid}`;
    if (!deps.checkCsrf(interaction.uid, field(ctx, 'csrf'))) {
      failurePage(ctx, 403, 'The form expired. Go back and try again.', back);
      return;
    }
    const user = await setupUser(interaction);
    if (!user) {
      failurePage(ctx, 400, NO_SETUP, back);
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
        recoveryCodes: codes && { codes, intro: 'Your passkey is ready.' },
      });
    } catch (error) {
      if (!(error instanceof PasskeyError)) throw error;
      failurePage(ctx, error.status, error.message, back);
    }
  });

  // --- the account page: enrol, rename, remove ------------------------------------------

  /** The account page's user, freshly signed in, when the form carries its CSRF token. */
  async function signedIn(ctx: Context, json = false) {
    const account = await deps.accountOf(ctx);
    if (account && constantTimeEqual(account.csrf, field(ctx, 'csrf'))) return account.user;
    if (json) jsonError(ctx, 403, 'sign in again to change your passkeys');
    else failurePage(ctx, 403, 'Sign in again to change your passkeys.', '/account');
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
      jsonError(ctx, error.status, error.message);
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
      const ready = `${passkey.name} is ready. Next time, choose “Sign in with a passkey”: no email or password needed.`;
      // A page, not the account page: after a first factor, that page wants a sign-in with it.
      htmlHeaders(ctx);
      ctx.status = 200;
      ctx.type = 'html';
      ctx.body = codes
        ? recoveryCodesPage(codes, ready)
        : page(
            'Passkey added',
            `<p role="status">${escapeHtml(ready)}</p>
<p><a href="/account">Back to your account</a></p>`,
          );
    } catch (error) {
      if (!(error instanceof PasskeyError)) throw error;
      failurePage(ctx, error.status, error.message, '/account');
    }
  });

  router.post('/account/passkeys/:id/rename', form, async function renamePasskey(ctx) {
    const user = await signedIn(ctx);
    if (!user) return;
    const name = field(ctx, 'name').trim();
    if (!name || name.length > PASSKEY_NAME_MAX) {
      failurePage(ctx, 400, `A passkey name is 1 to ${PASSKEY_NAME_MAX} characters.`, '/account');
      return;
    }
    if (!(await deps.repo.rename(user.id, String(ctx.params['id']), name))) {
      failurePage(ctx, 404, 'No such passkey.', '/account');
      return;
    }
    backToAccount(ctx);
  });

  router.post('/account/passkeys/:id/delete', form, async function removePasskey(ctx) {
    const user = await signedIn(ctx);
    if (!user) return;
    const id = String(ctx.params['id']);
    if (!(await deps.repo.remove(user.id, id))) {
      failurePage(ctx, 404, 'No such passkey.', '/account');
      return;
    }
    await deps.audit.record({ kind: 'passkey_removed', subject: user.id, detail: { passkey: id } });
    await deps.factorChanges.removed(user.id);
    backToAccount(ctx);
  });
}

import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '@portcullis/observability';
import type Router from '@koa/router';
import type { AccountsRepo, SignInLimiter } from '@portcullis/accounts';
import type { Context } from 'koa';
import type { InteractionResults } from 'oidc-provider';
import type { Logger } from 'pino';
import type { AuditRepo } from '../../data/audit-repo.js';
import { AMR, type MfaStep } from '../mfa/index.js';
import type { ProviderHost } from '../../oauth/provider-host.js';
import { formBody } from '../../kernel/form-body.js';
import { htmlHeaders, httpOrigins } from '../../kernel/security-headers.js';
import { translated } from '../ui/html.js';
import { passkeySignIn } from '../mfa/passkeys-views.js';
import type { AuthConfig } from '../../kernel/config.js';
import { OIDC_SCOPES } from '../../kernel/scopes.js';
import type { Ui, UiFactory } from '../ui/index.js';
import { clientDisplayName } from '../ui/client-name.js';
import { clientHostOf } from '../../oauth/client-id-metadata.js';
import { signupOffered } from '../self-service/signup-doors.js';
import { API_SCOPE, type AuthorizationDetail } from '@portcullis/claims';
import type { RegisteredResource, ResourceRegistry } from '../../oauth/resource-registry.js';
import {
  authorizationDetailItems,
  consentPage,
  loginPage,
  messagePage,
  type ConsentedApi,
} from './views.js';

export interface InteractionDeps {
  host: ProviderHost;
  accounts: AccountsRepo;
  audit: AuditRepo;
  logger: Logger;
  /** Failed logins per IP and per account (LOGIN_*), the API's POST /login limiter. */
  signInLimiter: SignInLimiter;
  csrfKey: string;
  /** The second factor: the one way a sign-in ends, and the factor page. */
  mfa: MfaStep;
  /** The pages' language and brand. */
  ui: UiFactory;
  /** SIGNUP: whether the sign-in page offers "Create an account". */
  selfService: Pick<AuthConfig['selfService'], 'signup'>;
  /** The registered APIs: the consent page names each one and its permissions' descriptions. */
  registry: Pick<ResourceRegistry, 'find'>;
}

/** An API on the consent page: its name and each permission asked for (`api` alone: none named). */
function consentedApi(
  resource: RegisteredResource | undefined,
  identifier: string,
  scopes: readonly string[],
): ConsentedApi {
  const named = scopes.filter((s) => s !== API_SCOPE);
  return {
    name: resource?.name ?? identifier,
    permissions: (named.length > 0 ? named : scopes).map((name) => ({
      name,
      description: resource?.permissions.get(name) ?? '',
    })),
  };
}

/** CSRF: the path-scoped SameSite `_interaction` cookie plus an HMAC of the uid in each form. */
export function csrfToken(key: string, uid: string): string {
  return createHmac('sha256', key).update(`interaction:${uid}`).digest('base64url');
}

export function checkCsrf(key: string, uid: string, presented: unknown): boolean {
  return constantTimeEqual(csrfToken(key, uid), presented);
}

function redirectOrigins(
  client: { redirectUris?: readonly string[] | undefined } | undefined,
): string[] {
  return httpOrigins(client?.redirectUris);
}

export function interactionRoutes(router: Router, deps: InteractionDeps): void {
  const { host, logger } = deps;
  const form = formBody('16kb');

  async function details(ctx: Context) {
    return host.current.interactionDetails(ctx.req, ctx.res);
  }

  /** Consent (or abort), merged with the sign-in's result (else prompt=login asks again). */
  async function finish(ctx: Context, result: InteractionResults) {
    const to = await host.current.interactionResult(ctx.req, ctx.res, result, {
      mergeWithLastSubmission: true,
    });
    ctx.redirect(to);
    ctx.status = 303;
  }

  /** The page's language: the interaction's ui_locales, then Accept-Language, then the default. */
  const uiOf = (ctx: Context, interaction: Details): Ui =>
    deps.ui.of(ctx, interaction.params['ui_locales']);

  /** `error`: a catalogue key and its values, shown in the page's language. */
  async function render(
    ctx: Context,
    status: number,
    error?: { key: string; values?: Record<string, unknown> },
    email?: string,
  ) {
    const interaction = await details(ctx);
    const pending = await deps.mfa.pendingOf(interaction);
    if (pending) {
      await deps.mfa.renderFactorPage(ctx, interaction, pending);
      return;
    }
    const client = await host.current.Client.find(String(interaction.params['client_id']));
    const ui = uiOf(ctx, interaction);
    const t = translated(ui.t);
    const clientName = clientDisplayName(ui, client);
    const csrf = csrfToken(deps.csrfKey, interaction.uid);
    const isLogin = interaction.prompt.name === 'login';
    htmlHeaders(ctx, redirectOrigins(client), { passkeyScript: isLogin, ui });
    ctx.status = status;
    ctx.type = 'html';
    if (isLogin) {
      // OIDC Core §3.1.2.1: the client's login_hint fills in the email (`npm run authorize`).
      const hint = interaction.params['login_hint'];
      const uid = encodeURIComponent(interaction.uid);
      ctx.body = loginPage(ui, {
        action: `/interaction/${interaction.uid}/login`,
        csrf,
        clientName,
        email: email ?? (typeof hint === 'string' ? hint.slice(0, 320) : undefined),
        error: error && t(error.key, error.values ?? {}),
        passkey: passkeySignIn(ui, interaction.uid, csrf),
        forgotPasswordHref: `/password/forgot?interaction=${uid}`,
        signupHref: signupOffered(deps.selfService, client?.metadata())
          ? `/signup?interaction=${uid}`
          : undefined,
      }).toString();
      return;
    }
    if (interaction.prompt.name === 'consent') {
      const details = interaction.prompt.details as {
        missingOIDCScope?: string[];
        missingResourceScopes?: Record<string, string[]>;
        rar?: AuthorizationDetail[];
      };
      // A payment is approved by the user on this page, even at a first-party client.
      if (client?.metadata()['first_party'] === true && !details.rar?.length) {
        await finish(ctx, { consent: { grantId: await grantConsent(interaction) } });
        return;
      }
      ctx.body = consentPage(ui, {
        action: `/interaction/${interaction.uid}/confirm`,
        abortAction: `/interaction/${interaction.uid}/abort`,
        csrf,
        clientName,
        clientHost: clientHostOf(client),
        // Permissions are provider scopes too: each is shown under its API, or not at all.
        scopes: [...new Set(details.missingOIDCScope ?? [])].filter((s) => OIDC_SCOPES.includes(s)),
        apis: Object.entries(details.missingResourceScopes ?? {}).map(([identifier, scopes]) =>
          consentedApi(deps.registry.find(identifier), identifier, scopes),
        ),
        details: details.rar && authorizationDetailItems(ui, details.rar),
      }).toString();
      return;
    }
    ctx.body = messagePage(
      ui,
      t('signin:unsupportedTitle'),
      t('signin:unsupportedStep'),
    ).toString();
  }

  type Details = Awaited<ReturnType<typeof details>>;

  /** Records consent to every scope the prompt asks for; returns the grant id. */
  async function grantConsent(interaction: Details): Promise<string> {
    const { Grant } = host.current;
    const accountId = interaction.session?.accountId;
    const clientId = String(interaction.params['client_id']);
    const grant =
      (interaction.grantId && (await Grant.find(interaction.grantId))) ||
      new Grant({ accountId, clientId });
    const d = interaction.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
      rar?: AuthorizationDetail[];
    };
    if (d.missingOIDCScope) grant.addOIDCScope(d.missingOIDCScope.join(' '));
    if (d.missingOIDCClaims) grant.addOIDCClaims(d.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(d.missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    for (const detail of d.rar ?? []) grant.addRar(detail);
    return grant.save();
  }

  function requireCsrf(ctx: Context, interaction: Details): boolean {
    const body = ctx.request.body as Record<string, unknown> | undefined;
    if (checkCsrf(deps.csrfKey, interaction.uid, body?.['csrf'])) return true;
    const ui = uiOf(ctx, interaction);
    htmlHeaders(ctx, [], { ui });
    ctx.status = 403;
    const t = translated(ui.t);
    ctx.body = messagePage(ui, t('common:requestRefused'), t('common:formExpired')).toString();
    return false;
  }

  router.get('/interaction/:uid', async function showInteraction(ctx) {
    await render(ctx, 200);
  });

  router.post('/interaction/:uid/login', form, async function submitLogin(ctx) {
    const interaction = await details(ctx);
    if (interaction.prompt.name !== 'login' || !requireCsrf(ctx, interaction)) {
      if (ctx.status !== 403) ctx.throw(400, 'not a login step');
      return;
    }
    const body = ctx.request.body as Record<string, unknown>;
    const email = typeof body['email'] === 'string' ? body['email'].trim().slice(0, 320) : '';
    const password = typeof body['password'] === 'string' ? body['password'] : '';
    const attempt = await deps.signInLimiter.begin(ctx.ip, email);
    if (attempt.retryAfter > 0) {
      ctx.set('Retry-After', String(attempt.retryAfter));
      await render(
        ctx,
        429,
        { key: 'signin:tooManyAttempts', values: { seconds: attempt.retryAfter } },
        email,
      );
      return;
    }

    const user =
      email && password ? await deps.accounts.verifyCredentials(email, password) : undefined;
    if (!user) {
      logger.warn({ event: 'login_failed', ip: ctx.ip }, 'failed login');
      await deps.audit.record({ kind: 'login_failed', detail: { ip: ctx.ip } });
      await render(ctx, 400, { key: 'signin:invalidCredentials' }, email);
      return;
    }
    await attempt.succeeded();
    await deps.mfa.completeSignIn(ctx, interaction, { accountId: user.id, amr: [AMR.password] });
  });

  router.post('/interaction/:uid/confirm', form, async function submitConsent(ctx) {
    const interaction = await details(ctx);
    if (interaction.prompt.name !== 'consent' || !requireCsrf(ctx, interaction)) {
      if (ctx.status !== 403) ctx.throw(400, 'not a consent step');
      return;
    }
    await finish(ctx, { consent: { grantId: await grantConsent(interaction) } });
  });

  router.post('/interaction/:uid/abort', form, async function abortInteraction(ctx) {
    const interaction = await details(ctx);
    if (!requireCsrf(ctx, interaction)) return;
    await finish(ctx, {
      error: 'access_denied',
      error_description: 'End-User aborted interaction',
    });
  });
}

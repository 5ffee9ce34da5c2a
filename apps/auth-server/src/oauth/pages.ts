import type { Context } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';

/** oidc-provider's user-code form as data; the page renders it (no inline handler: CSP). */
export interface UserCodeForm {
  action: string;
  /** The xsrf secret oidc-provider keeps in the session for the device pages. */
  xsrf: string;
  userCode?: string | undefined;
}

/** Why a user code was refused (oidc-provider's error names, as the pages' translation keys). */
export type UserCodeRefusal =
  'notFound' | 'expired' | 'alreadyUsed' | 'aborted' | 'noCode' | 'other';

/**
 * The pages of oidc-provider's flows. The core decides when each is shown; identity renders them
 * (identity/interactions/provider-pages.ts), each setting the headers, type and body.
 * `form` arguments are oidc-provider's own form markup.
 */
export interface ProviderPages {
  logoutConfirm(ctx: KoaContextWithOIDC, form: string): void;
  loggedOut(ctx: KoaContextWithOIDC): void;
  userCodeInput(ctx: Context, form: UserCodeForm, refusal?: UserCodeRefusal): void;
  userCodeConfirm(
    ctx: KoaContextWithOIDC,
    form: string,
    clientName: string,
    userCode: string,
  ): void;
  deviceConnected(ctx: KoaContextWithOIDC): void;
  /** oidc-provider's error page: its code and description (English, for developers). */
  error(ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }): void;
  /** A device page that can only fail (no session to resume). */
  deviceExpired(ctx: Context): void;
  /** Too many wrong user codes. */
  tooManyUserCodes(ctx: Context): void;
}

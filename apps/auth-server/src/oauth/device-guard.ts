import type { AttemptLimiter, CheckedAttempt } from '@portcullis/accounts';
import type { Context, Middleware } from 'koa';
import type { KoaContextWithOIDC } from 'oidc-provider';
import type { DevicePollsRepo } from '../data/device-polls-repo.js';
import type { ProviderPages } from './pages.js';
import { DEVICE_GRANT } from '../kernel/grant-types.js';

export interface DeviceGuardOptions {
  /** Seconds between polls announced in the device authorization response (RFC 8628 §3.2). */
  intervalSeconds: number;
  /** Wrong user codes, counted per IP and per browser session (only failures count). */
  userCodeLimiter: AttemptLimiter<'ip' | 'session'>;
  /** Cookie naming the browser session (oidc-provider's session cookie). */
  sessionCookie: string;
  /** oidc-provider's interaction resume cookie (configuration.ts `cookies.names.resume`). */
  resumeCookie: string;
  /** Its pages, rendered by identity. */
  pages: Pick<ProviderPages, 'deviceExpired' | 'tooManyUserCodes'>;
}

/** oidc-provider's device_resume route: where the browser returns after signing in. */
const DEVICE_RESUME = /^\/device\/[^/]+\/?$/i;
const CODE_FORM = /^\/device\/?$/i;

/** Device pages that can only fail; oidc-provider 9 would throw (500) rendering them. */
function cannotSucceed(ctx: Context, options: DeviceGuardOptions): boolean {
  if (ctx.method === 'GET' || ctx.method === 'HEAD') {
    return DEVICE_RESUME.test(ctx.path) && !ctx.cookies.get(options.resumeCookie);
  }
  return (
    ctx.method === 'POST' && CODE_FORM.test(ctx.path) && !ctx.cookies.get(options.sessionCookie)
  );
}

/** What RFC 8628 leaves to us: `interval` (§3.2), `slow_down` (§3.5), a wrong-code limit (§5.1). */
export function createDeviceGuard(polls: DevicePollsRepo, options: DeviceGuardOptions) {
  // Without a session the code form cannot succeed (cannotSucceed); the IP stands in.
  const limiterKeys = (ctx: {
    ip: string;
    cookies: { get(name: string): string | undefined };
  }) => ({
    ip: ctx.ip,
    session: ctx.cookies.get(options.sessionCookie) ?? `ip:${ctx.ip}`,
  });
  const checked = new WeakMap<object, CheckedAttempt>();

  const middleware: Middleware = async function deviceGuard(ctx, next) {
    if (cannotSucceed(ctx, options)) return options.pages.deviceExpired(ctx);
    if (ctx.method === 'POST' && ctx.path === '/device') {
      const attempt = await options.userCodeLimiter.check(limiterKeys(ctx));
      if (attempt.retryAfter > 0) {
        ctx.set('Retry-After', String(attempt.retryAfter));
        options.pages.tooManyUserCodes(ctx);
        return;
      }
      checked.set(ctx, attempt);
    }
    try {
      await next();
    } catch (error) {
      // A session without the form's secret: oidc-provider 9 throws rendering its retry form.
      if (ctx.method === 'POST' && CODE_FORM.test(ctx.path) && error instanceof TypeError)
        return options.pages.deviceExpired(ctx);
      throw error;
    }
    if (ctx.method !== 'POST') return;
    if (ctx.path === '/device/auth' && ctx.status === 200) {
      const body = ctx.body as Record<string, unknown> | undefined;
      if (body && typeof body['device_code'] === 'string')
        body['interval'] = options.intervalSeconds;
      return;
    }
    if (ctx.path === '/token') {
      const oidc = (ctx as unknown as KoaContextWithOIDC).oidc;
      const params = oidc?.params as Record<string, unknown> | undefined;
      const deviceCode = params?.['device_code'];
      if (params?.['grant_type'] !== DEVICE_GRANT || typeof deviceCode !== 'string') return;
      const { slow } = await polls.record(deviceCode, options.intervalSeconds);
      const body = ctx.body as Record<string, unknown> | undefined;
      if (slow && ctx.status === 400 && body?.['error'] === 'authorization_pending') {
        ctx.body = {
          error: 'slow_down',
          error_description: 'polling too fast; wait longer between polls',
        };
      }
    }
  };

  return {
    middleware,
    /** Called by the user-code page renderer when a submitted code matched nothing. */
    async recordWrongUserCode(ctx: KoaContextWithOIDC): Promise<void> {
      const attempt = checked.get(ctx) ?? (await options.userCodeLimiter.check(limiterKeys(ctx)));
      await attempt.failed();
    },
  };
}

export type DeviceGuard = ReturnType<typeof createDeviceGuard>;

import { createAttemptLimiter, type AttemptStore, type CheckedAttempt } from '@portcullis/accounts';
import type { Middleware } from 'koa';
import { errors, type KoaContextWithOIDC } from 'oidc-provider';
import type { ClientAuthLimits } from '../kernel/config.js';
import { isUnavailable, markUnavailable } from '../kernel/unavailable.js';
import { currentRequest } from '../data/request-memo.js';

/** oidc-provider's routes that authenticate the client (token, introspection, revocation, PAR, device). */
const AUTHENTICATING = new Set([
  'token',
  'introspection',
  'revocation',
  'pushed_authorization_request',
  'device_authorization',
  'backchannel_authentication',
]);

/** 429 in oidc-provider's error shape: `{"error":"invalid_client","error_description":…}`. */
class TooManyClientAuthFailures extends errors.OIDCProviderError {
  override error_description: string;
  constructor(retryAfter: number) {
    super(429, 'invalid_client');
    this.error_description = `too many failed client authentications; retry after ${retryAfter} seconds`;
  }
}

/** Failed client authentications, limited (docs/security.md "Client authentication limits"). */
export function createClientAuthLimits(limits: ClientAuthLimits, store: AttemptStore) {
  const window = limits.windowSec;
  const limiter = createAttemptLimiter(
    {
      address: { points: limits.perAddress, durationSec: window, onSuccess: 'reward' },
      clientFromAddress: {
        points: limits.perClientAndAddress,
        durationSec: window,
        onSuccess: 'reset',
      },
      client: { points: limits.perClient, durationSec: window, onSuccess: 'reward' },
    },
    store,
  );
  const attempts = new WeakMap<object, CheckedAttempt>();

  /**
   * Before oidc-provider's client lookup (internals.ts wrapClientFind), where every client
   * authentication starts: counted once per request on the authenticating routes, 429 when over.
   */
  async function beforeLookup<T>(id: string, lookUp: () => Promise<T>): Promise<T> {
    const ctx = currentRequest() as KoaContextWithOIDC | undefined;
    if (ctx?.oidc && AUTHENTICATING.has(ctx.oidc.route) && !attempts.has(ctx)) {
      const attempt = await limiter
        .check({ address: ctx.ip, clientFromAddress: `${id} ${ctx.ip}`, client: String(id) })
        .catch((error: unknown) => {
          // oidc-provider answers what it cannot map with a 500; this makes it a 503.
          if (isUnavailable(error)) markUnavailable(ctx as never);
          throw error;
        });
      attempts.set(ctx, attempt);
      if (attempt.retryAfter > 0) throw new TooManyClientAuthFailures(attempt.retryAfter);
    }
    return lookUp();
  }

  /** After oidc-provider answered: anything but 401 invalid_client authenticated the client. */
  const settle: Middleware = async function settleClientAuthentication(ctx, next) {
    await next();
    const attempt = attempts.get(ctx);
    if (!attempt) return;
    if (attempt.retryAfter > 0) {
      ctx.set('Retry-After', String(attempt.retryAfter));
      return;
    }
    const body = ctx.body as { error?: unknown } | undefined;
    if (ctx.status === 401 && body?.error === 'invalid_client') await attempt.failed();
    else await attempt.succeeded();
  };

  return { beforeLookup, settle };
}

export type ClientAuthLimiter = ReturnType<typeof createClientAuthLimits>;

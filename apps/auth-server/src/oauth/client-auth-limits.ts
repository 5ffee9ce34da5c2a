import { createAttemptLimiter, type AttemptStore, type CheckedAttempt } from '@portcullis/accounts';
import type { Middleware } from 'koa';
import Provider, { errors, type Client } from 'oidc-provider';
import type { ClientAuthLimits } from '../kernel/config.js';
import { isUnavailable, markUnavailable } from '../kernel/unavailable.js';

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

  /** The hook: oidc-provider's client lookup, where every client authentication starts. */
  function watch(provider: Provider): void {
    const Clients = provider.Client as unknown as {
      find(id: string): Promise<Client | undefined>;
    };
    const find = Clients.find.bind(Clients);
    Clients.find = async function countClientAuthentication(id) {
      const ctx = Provider.ctx;
      if (ctx && AUTHENTICATING.has(ctx.oidc?.route) && !attempts.has(ctx)) {
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
      return find(id);
    };
    provider.use(settle);
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

  return { watch };
}

export type ClientAuthLimiter = ReturnType<typeof createClientAuthLimits>;

import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import { unregisterResponseMode } from './internals.js';

/** The only response mode allowed; fragment stays registered for refused implicit requests. */
export const RESPONSE_MODES = ['query'];

/** form_post answers an inline script our CSP blocks: taken out (unsupported_response_mode). */
export function removeFormPost(provider: Provider): void {
  unregisterResponseMode(provider, 'form_post');
}

/** OpenID Connect's and RFC 8414's URL of the one discovery document. */
const DISCOVERY_PATHS = new Set([
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
]);

/** Discovery always lists all three and its setting cannot remove any: corrected after it. */
export const advertiseResponseModes: Middleware = async function advertiseResponseModes(ctx, next) {
  await next();
  const body = ctx.body as { response_modes_supported?: string[] } | undefined;
  if (DISCOVERY_PATHS.has(ctx.path) && body?.response_modes_supported) {
    body.response_modes_supported = [...RESPONSE_MODES];
  }
};

import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
// oidc-provider registers form_post, fragment and query at construction with no setting to
// leave one out; its internal registry is the one place to take them away.
// @ts-expect-error: an internal module without type declarations.
import internals from 'oidc-provider/lib/helpers/weak_cache.js';

/**
 * The only response mode a client may ask for (README "Features of oidc-provider"): the
 * code comes back in the redirect's query. fragment has no use for response_type=code
 * and is refused for every client (clientDefaults.response_modes); it stays registered
 * because oidc-provider answers a refused implicit response_type there.
 */
export const RESPONSE_MODES = ['query'];

/**
 * form_post answers a page with an inline script, which our CSP (no script at all) would
 * block: it is taken out, so a request asking for it is refused with
 * unsupported_response_mode, in the query.
 */
export function removeFormPost(provider: Provider): void {
  (internals as (p: Provider) => { responseModes: Map<string, unknown> })(
    provider,
  ).responseModes.delete('form_post');
}

/**
 * oidc-provider's discovery always lists form_post, fragment and query, and its
 * `discovery` setting only fills absent fields: the document is corrected after it.
 */
export const advertiseResponseModes: Middleware = async function advertiseResponseModes(ctx, next) {
  await next();
  const body = ctx.body as { response_modes_supported?: string[] } | undefined;
  if (ctx.path === '/.well-known/openid-configuration' && body?.response_modes_supported) {
    body.response_modes_supported = [...RESPONSE_MODES];
  }
};

import type { Middleware } from 'koa';
import { UnsupportedMediaTypeError } from '../errors.js';

// application/merge-patch+json (RFC 7396) is what a PATCH body is, semantically.
export const JSON_TYPES = ['application/json', 'application/merge-patch+json'];

/** A body must declare JSON, else it would be ignored and validation would blame missing fields. */
export function requireJsonBody(formPaths: readonly string[] = []): Middleware {
  return async function requireJson(ctx, next) {
    // An empty body (fetch's bodiless POST) needs no type.
    const hasBody = ctx.get('Transfer-Encoding') !== '' || (ctx.request.length ?? 0) > 0;
    // HTML login forms post url-encoded bodies; only the paths listed may (POST /login).
    const form =
      formPaths.includes(ctx.path) && ctx.request.is('application/x-www-form-urlencoded');
    const writes = ['POST', 'PUT', 'PATCH'].includes(ctx.method);
    if (hasBody && writes && !ctx.request.is(JSON_TYPES) && !form) {
      throw new UnsupportedMediaTypeError();
    }
    await next();
  };
}

import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { AuthServerError } from '../errors.js';
import { htmlHeaders } from '../security-headers.js';
import { isUnavailable, RETRY_AFTER_SECONDS } from '../unavailable.js';
import { messagePage } from './views.js';

/** Interaction pages answer HTML errors; an expired or foreign interaction is a 400, not a 500. */
export function interactionErrors(logger: Logger): Middleware {
  return async function renderInteractionError(ctx, next) {
    try {
      await next();
    } catch (error) {
      const e = error as {
        status?: number;
        statusCode?: number;
        expose?: boolean;
        error_description?: string;
        message?: string;
      };
      const unavailable = isUnavailable(error);
      const status = unavailable ? 503 : (e.statusCode ?? e.status ?? 500);
      if (unavailable) logger.warn({ err: error, path: ctx.path }, 'dependency unavailable');
      else if (status >= 500) logger.error({ err: error, path: ctx.path }, 'interaction failed');
      htmlHeaders(ctx);
      // Fail closed and say so: a 503 with Retry-After, never an unchecked login.
      if (unavailable) ctx.set('Retry-After', RETRY_AFTER_SECONDS);
      ctx.status = unavailable ? 503 : status >= 500 ? 500 : status;
      ctx.type = 'html';
      ctx.body = messagePage(
        'Sign-in problem',
        unavailable
          ? 'Sign-in is temporarily unavailable. Try again in a few seconds.'
          : status >= 500
            ? 'Something went wrong.'
            : error instanceof AuthServerError && error.expose
              ? error.message
              : 'This sign-in request has expired or is not valid here. Start again from the application.',
      );
    }
  };
}

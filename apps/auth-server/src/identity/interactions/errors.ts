import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import type { UiFactory } from '../ui/index.js';
import { AuthServerError } from '../../kernel/errors.js';
import { htmlHeaders } from '../../kernel/security-headers.js';
import { isUnavailable, RETRY_AFTER_SECONDS } from '../../kernel/unavailable.js';
import { markup, translated } from '../ui/html.js';
import { messagePage } from './views.js';

/** Interaction pages answer HTML errors; an expired or foreign interaction is a 400, not a 500. */
export function interactionErrors(logger: Logger, uiFactory: UiFactory): Middleware {
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
      const ui = uiFactory.of(ctx);
      const t = translated(ui.t);
      htmlHeaders(ctx, [], { ui });
      // Fail closed and say so: a 503 with Retry-After, never an unchecked login.
      if (unavailable) ctx.set('Retry-After', RETRY_AFTER_SECONDS);
      ctx.status = unavailable ? 503 : status >= 500 ? 500 : status;
      ctx.type = 'html';
      ctx.body = messagePage(
        ui,
        t('common:signInProblem'),
        unavailable
          ? t('common:unavailable')
          : status >= 500
            ? t('common:somethingWrong')
            : error instanceof AuthServerError && error.expose
              ? error.uiText
                ? t(error.uiText.key, error.uiText.values ?? {})
                : markup`${error.message}`
              : t('common:interactionExpired'),
      ).toString();
    }
  };
}

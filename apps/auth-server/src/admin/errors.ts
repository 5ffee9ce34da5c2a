import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { isUniqueViolation } from '@portcullis/db';
import { PasswordPolicyError } from '@portcullis/accounts';

type Code =
  | 'unauthorized'
  | 'validation_failed'
  | 'invalid_client_metadata'
  | 'not_found'
  | 'conflict'
  | 'bad_request'
  | 'payload_too_large'
  | 'internal_error';

/** An error the admin API renders as `{error, message?, fields?}`. */
export class AdminError extends Error {
  constructor(
    readonly status: number,
    readonly code: Code,
    message?: string,
    readonly fields?: Record<string, string[]>,
  ) {
    super(message ?? code);
  }
}

/** The one renderer of the admin API: library errors mapped, unknown errors logged as 500. */
export function adminErrors(logger: Logger): Middleware {
  return async function renderAdminError(ctx, next) {
    try {
      await next();
    } catch (error) {
      let e: AdminError;
      if (error instanceof AdminError) e = error;
      else if (error instanceof PasswordPolicyError) {
        e = new AdminError(422, 'validation_failed', error.message, { password: [error.message] });
      } else if (isUniqueViolation(error)) e = new AdminError(409, 'conflict', 'already exists');
      else if ((error as { status?: number }).status === 413)
        e = new AdminError(413, 'payload_too_large');
      else if ((error as { status?: number }).status === 400)
        e = new AdminError(400, 'bad_request', 'malformed JSON body');
      else {
        logger.error({ err: error, path: ctx.path }, 'admin API error');
        e = new AdminError(500, 'internal_error');
      }
      ctx.status = e.status;
      ctx.body = {
        error: e.code,
        ...(e.message !== e.code ? { message: e.message } : {}),
        ...(e.fields ? { fields: e.fields } : {}),
      };
      if (e.status === 401) ctx.set('WWW-Authenticate', 'Bearer');
    }
  };
}

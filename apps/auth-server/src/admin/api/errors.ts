import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import { isUniqueViolation } from '@portcullis/db';
import { PasswordPolicyError } from '@portcullis/accounts';
import {
  ERROR_CODES,
  type ErrorBody,
  type ErrorCodeOf,
  type FieldErrors,
} from '@portcullis/observability';
import { AuthServerError } from '../../kernel/errors.js';

/** The admin API's codes: the API's for the same conditions (docs/api-contracts.md). */
export type AdminErrorCode = ErrorCodeOf<'admin'>;

/** An error the admin API renders as `{error, message?, fields?}`, its status from its code. */
export class AdminError extends AuthServerError {
  constructor(
    readonly code: AdminErrorCode,
    message?: string,
    readonly fields?: FieldErrors,
  ) {
    const { status } = ERROR_CODES[code];
    super(message ?? code, { status, expose: status < 500 });
  }

  body(): ErrorBody<AdminErrorCode> {
    return {
      error: this.code,
      ...(this.message !== this.code ? { message: this.message } : {}),
      ...(this.fields ? { fields: this.fields } : {}),
    };
  }
}

/** Bodiless statuses set by the router (405) get the code the API gives them. */
const STATUS_CODES: Record<number, AdminErrorCode> = { 405: 'method_not_allowed' };

/** The one renderer of the admin API: library errors mapped, unknown errors logged as 500. */
export function adminErrors(logger: Logger): Middleware {
  return async function renderAdminError(ctx, next) {
    try {
      await next();
      const code = STATUS_CODES[ctx.status];
      if (code && ctx.body == null) throw new AdminError(code);
    } catch (error) {
      let e: AdminError;
      if (error instanceof AdminError) e = error;
      else if (error instanceof PasswordPolicyError) {
        e = new AdminError('validation_failed', error.message, { password: [error.message] });
      } else if (isUniqueViolation(error)) e = new AdminError('conflict', 'already exists');
      else if ((error as { status?: number }).status === 413)
        e = new AdminError('payload_too_large');
      else if ((error as { status?: number }).status === 400) e = new AdminError('invalid_request');
      else {
        logger.error({ err: error, path: ctx.path }, 'admin API error');
        e = new AdminError('internal_error');
      }
      ctx.status = e.status;
      ctx.body = e.body();
      // As the API's (RFC 6750 §3): `error="invalid_token"` only when a token was presented.
      if (e.status === 401) {
        const error = e.code === 'invalid_token' ? ', error="invalid_token"' : '';
        ctx.set('WWW-Authenticate', `Bearer realm="portcullis-admin"${error}`);
      }
    }
  };
}

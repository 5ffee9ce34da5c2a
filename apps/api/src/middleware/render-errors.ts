import type { Middleware } from 'koa';
import type { Logger } from 'pino';
import {
  AuthenticationError,
  ForbiddenError as ClaimsForbiddenError,
  fromTokenError,
  TokenError,
  type ChallengeSettings,
} from '@portcullis/claims';
import { isDatabaseUnavailable, isUniqueViolation } from '@portcullis/db';
import {
  AppError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  RefusalError,
  ServiceUnavailableError,
  type ErrorCode,
} from '../errors.js';
import { bodyReadError } from '../http/body-parser.js';

/** Every thrown value becomes an AppError; anything unrecognised is a 500. */
export function toAppError(error: unknown, challenge: ChallengeSettings = {}): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof AuthenticationError) return new RefusalError(error);
  if (error instanceof TokenError) return new RefusalError(fromTokenError(challenge, error));
  if (error instanceof ClaimsForbiddenError) return new ForbiddenError(error.permission);
  if (isUniqueViolation(error)) return new ConflictError('conflict', 'the resource already exists');
  if (isDatabaseUnavailable(error)) {
    return new ServiceUnavailableError('the service is temporarily unavailable', 5, error);
  }
  const body = bodyReadError(error);
  if (body) return body;
  return new AppError(500, 'internal_error', 'internal server error', {
    expose: false,
    cause: error,
  });
}

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'invalid_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'validation_failed',
  429: 'rate_limited',
};

/** The one error renderer; also shapes bodiless 404/405 and logs 5xx, never sending a stack. */
export function renderErrors(logger: Logger, challenge: ChallengeSettings = {}): Middleware {
  return async function errorRenderer(ctx, next) {
    try {
      await next();
      if (ctx.status >= 400 && ctx.body == null) {
        if (ctx.status === 404) throw new NotFoundError();
        ctx.body = { error: STATUS_CODES[ctx.status] ?? 'invalid_request' };
      }
    } catch (thrown) {
      const error = toAppError(thrown, challenge);
      const log = (ctx.state as { log?: Logger }).log ?? logger;
      if (error.status >= 500) {
        log.error(
          { err: error.cause ?? error, method: ctx.method, path: ctx.path },
          'request failed',
        );
      } else if (error instanceof ForbiddenError || error instanceof RefusalError) {
        // The detail of a refusal goes to the log; the client gets its fixed description.
        const detail = thrown instanceof AuthenticationError ? (thrown.cause ?? thrown) : thrown;
        log.info(
          {
            code:
              thrown instanceof AuthenticationError
                ? thrown.reason
                : (thrown as { code?: unknown }).code,
            reason: (detail as Error).message,
          },
          'access refused',
        );
      }
      ctx.status = error.status;
      for (const [name, value] of Object.entries(error.headersWith(challenge))) {
        ctx.set(name, value);
      }
      ctx.remove('ETag');
      ctx.remove('Last-Modified');
      ctx.set('Cache-Control', 'no-store');
      // The rest of a body too large is not read to its end: the server's lingering close
      // reads it for a bounded time only (createHttpServer, LINGER_MS).
      if (error.status === 413) ctx.set('Connection', 'close');
      ctx.body = error.body();
    }
  };
}

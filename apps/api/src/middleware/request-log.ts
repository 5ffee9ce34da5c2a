import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from 'pino';

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** One line per request; the query string is left out (it may carry filters with personal data). */
export function requestLog(logger: Logger): Middleware {
  return async function logRequest(ctx, next) {
    const started = performance.now();
    const incoming = ctx.get('X-Request-Id');
    const id = REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.set('X-Request-Id', id);
    try {
      await next();
    } finally {
      const subject = (ctx.state as { principal?: { subject: string } }).principal?.subject;
      logger.info(
        {
          id,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(performance.now() - started),
          subject,
        },
        'request',
      );
    }
  };
}

import { bodyParser } from '@koa/bodyparser';
import { bodyFailureOf, refuseNul } from '@portcullis/observability';
import type { Middleware } from 'koa';

/**
 * The pages' form parser: urlencoded only, at most `formLimit`, its failures as 4xx, and a
 * NUL anywhere in it refused with 400 (PostgreSQL cannot store one; emails are looked up).
 */
export function formBody(formLimit: string): Middleware {
  const parseForm = bodyParser({
    enableTypes: ['form'],
    formLimit,
    onError(error, ctx) {
      const failure = bodyFailureOf(error, ctx.get('Content-Encoding'));
      ctx.throw(failure.status, failure.message);
    },
  });
  const refuseNulInForm = refuseNul({ refuse: (ctx) => ctx.throw(400, 'NUL character') });
  return function formBody(ctx, next) {
    return parseForm(ctx, () => refuseNulInForm(ctx, next));
  };
}

import { bodyParser } from '@koa/bodyparser';
import { bodyFailureOf, refuseNul } from '@portcullis/observability';
import type { Middleware } from 'koa';

/** The pages' form parser: urlencoded, bounded, a NUL refused (README "Bad input"). */
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

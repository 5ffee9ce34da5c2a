import { z } from 'zod';

const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

/** RESOURCES: further resource servers by URL, each with the scopes it understands. */
export const resourceVariables = {
  RESOURCES: z
    .string()
    .transform((v, ctx) => {
      try {
        return JSON.parse(v) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
        return z.NEVER;
      }
    })
    .pipe(
      z.record(
        z.url({ protocol: /^https?$/ }).refine((u) => !u.includes('#'), 'no fragment'),
        z
          .string()
          .max(1000)
          .transform((s) => [...new Set(s.split(' ').filter(Boolean))])
          .refine((s) => s.every((t) => SCOPE_TOKEN.test(t)), 'must be space-separated scopes'),
      ),
    )
    .default({}),
};

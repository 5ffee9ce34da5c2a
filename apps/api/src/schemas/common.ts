import { z } from '../openapi/zod.js';

export const ErrorSchema = z
  .object({
    error: z.string().openapi({ example: 'not_found', description: 'Machine-readable error code' }),
    message: z.string().optional(),
  })
  .openapi('Error');

/** 401 of a step-up route (README "Step-up"; RFC 9470 §3). */
export const StepUpErrorSchema = z
  .object({
    error: z.literal('insufficient_user_authentication'),
    message: z.string(),
    acr_values: z.string().openapi({ description: "The authorization request's `acr_values`" }),
    max_age: z
      .number()
      .int()
      .optional()
      .openapi({ description: "The authorization request's `max_age`, seconds" }),
  })
  .openapi('StepUpError');

export const ValidationErrorSchema = z
  .object({
    error: z.literal('validation_failed'),
    message: z.string(),
    fields: z
      .record(z.string(), z.array(z.string()))
      .openapi({ description: 'Messages per field (dotted path); unknown fields are named too' }),
  })
  .openapi('ValidationError');

export const IdParams = z.object({
  id: z.uuid().openapi({
    param: { description: 'Resource id' },
    example: '0b4f6e3c-2f7e-4a8b-9b1a-5f0c1d2e3f40',
  }),
});

/** `limit` of every paginated list: default 20, at most 100 (docs/api-contracts.md). */
export const Limit = z.coerce
  .number()
  .int()
  .min(1)
  .max(100)
  .default(20)
  .openapi({ param: { description: 'Page size, 1..100' } });

/** The query of every cursor-paginated list (docs/api-contracts.md). */
export const CursorPageQuery = z.object({
  after: z
    .string()
    .max(512)
    .optional()
    .openapi({ param: { description: 'Opaque cursor: the nextCursor of the previous page' } }),
  limit: Limit,
});

export const etagHeader = {
  ETag: z.string().openapi({ description: 'Strong validator for If-None-Match / If-Match' }),
};

export const IfMatchHeaders = z.object({
  'if-match': z
    .string()
    .optional()
    .openapi({
      param: {
        description: 'ETag from a previous GET; a stale value gives 412 and nothing is written',
      },
    }),
});

export const IfNoneMatchHeaders = z.object({
  'if-none-match': z
    .string()
    .optional()
    .openapi({ param: { description: 'ETag of a cached copy; 304 when unchanged' } }),
});

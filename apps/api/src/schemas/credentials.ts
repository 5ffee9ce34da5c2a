import { z } from '../openapi/zod.js';

// Lenient on extra fields: an HTML form may post its submit button or a CSRF field too.
export const LoginBody = z
  .object({
    email: z.string().trim().min(1).max(320),
    password: z.string().min(1).max(4096),
  })
  .openapi('LoginRequest');

export const LoginResponse = z
  .object({ user: z.object({ id: z.string(), email: z.string(), roles: z.array(z.string()) }) })
  .openapi('LoginResponse');

export const CreateApiKeyBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    permissions: z
      .array(z.string().max(100))
      .min(1)
      .max(50)
      .openapi({ description: 'A subset of the caller’s own permissions, e.g. `orders:read`' }),
    rateLimit: z.number().int().min(1).optional().openapi({
      description: 'Requests per rate-limit window; at most the server default (lower only)',
    }),
  })
  .openapi('CreateApiKeyRequest');

export const ApiKeySchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    permissions: z.array(z.string()),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
    revoked: z.boolean(),
    revokedAt: z.iso.datetime().nullable(),
    rateLimit: z.number().int().nullable(),
  })
  .openapi('ApiKey');

export const CreatedApiKeySchema = ApiKeySchema.extend({
  key: z
    .string()
    .openapi({ description: 'The key, shown this once: `sk_live_` + 43 base64url characters' }),
}).openapi('CreatedApiKey');

export const ApiKeyPageSchema = z
  .object({ items: z.array(ApiKeySchema), nextCursor: z.string().nullable() })
  .openapi('ApiKeyPage');

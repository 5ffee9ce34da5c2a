import { ROLES } from '@portcullis/claims';
import { z } from 'zod';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const GRANT_ALIASES: Record<string, string> = { device_code: DEVICE_GRANT };
const PUBLIC_GRANTS = new Set(['authorization_code', 'refresh_token', DEVICE_GRANT]);

const role = z.enum(ROLES as [string, ...string[]]);
const grantType = z
  .string()
  .transform((g) => GRANT_ALIASES[g] ?? g)
  .pipe(z.enum(['authorization_code', 'refresh_token', 'client_credentials', DEVICE_GRANT]));

/**
 * RFC 7591 §2 client metadata (the subset this server supports), RFC 9449's
 * `dpop_bound_access_tokens`, plus `roles` and `first_party`.
 */
export const newClientSchema = z
  .object({
    client_id: z
      .string()
      .regex(/^[A-Za-z0-9._~-]{3,64}$/, 'letters, digits and . _ ~ - only, 3 to 64 characters')
      .optional(),
    client_name: z.string().min(1).max(100).optional(),
    redirect_uris: z.array(z.url()).max(20).default([]),
    post_logout_redirect_uris: z.array(z.url()).max(20).optional(),
    grant_types: z.array(grantType).min(1).default(['authorization_code', 'refresh_token']),
    response_types: z.array(z.literal('code')).optional(),
    token_endpoint_auth_method: z
      .enum(['client_secret_basic', 'client_secret_post', 'none'])
      .default('client_secret_basic'),
    scope: z.string().max(1000).optional(),
    roles: z.array(role).max(10).optional(),
    first_party: z.boolean().optional(),
    /** The client must send a DPoP proof with every token request (README "DPoP"). */
    dpop_bound_access_tokens: z.boolean().optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const isPublic = c.token_endpoint_auth_method === 'none';
    if (isPublic) {
      for (const g of c.grant_types) {
        if (!PUBLIC_GRANTS.has(g)) {
          ctx.addIssue({
            code: 'custom',
            path: ['grant_types'],
            message: `a public client (token_endpoint_auth_method none) cannot use ${g}`,
          });
        }
      }
    }
    if (c.grant_types.includes('authorization_code') && c.redirect_uris.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['redirect_uris'],
        message: 'required for authorization_code',
      });
    }
    if (c.roles && !c.grant_types.includes('client_credentials')) {
      ctx.addIssue({
        code: 'custom',
        path: ['roles'],
        message: 'only for client_credentials clients',
      });
    }
  });

export type NewClient = z.output<typeof newClientSchema>;

export const newUserSchema = z
  .object({
    email: z.email().max(320),
    password: z.string().max(1024),
    roles: z.array(role).max(10).default([]),
    name: z.string().min(1).max(200).nullish(),
  })
  .strict();

/** `activate: 'now'` skips the publish lead (emergency rotation): see provider/keys.ts. */
export const rotateKeySchema = z
  .object({
    alg: z.enum(['RS256', 'ES256']).optional(),
    activate: z.enum(['now', 'scheduled']).default('scheduled'),
  })
  .strict();

export const listQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().max(200).optional(),
  before: z.string().regex(/^\d+$/).optional(),
  kind: z.string().max(64).optional(),
});

/** zod issues as `{ field: [messages] }`. */
export function fieldErrors(error: z.ZodError): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  for (const issue of error.issues) {
    const key = issue.path.length ? String(issue.path[0]) : '_';
    (fields[key] ??= []).push(issue.message);
  }
  return fields;
}

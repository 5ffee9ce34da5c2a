import { ROLE_NAME } from '@portcullis/db';
import { PAYMENT_DETAIL_TYPE } from '@portcullis/shop';
import { z } from 'zod';
import {
  CLIENT_ASSERTION_ALGS,
  CLIENT_AUTH_METHODS,
  LEGACY_AUDIENCE,
} from '../../oauth/client-assertion.js';
import { DEVICE_GRANT, TOKEN_EXCHANGE_GRANT } from '../../kernel/grant-types.js';
import {
  EXCHANGE_NEEDS_AUTHENTICATION,
  mayExchangeTokens,
  tokenExchangePolicySchema,
} from '../../oauth/token-exchange.js';
import { isHttpsOrLoopback, LOOPBACK_IPS } from '../../oauth/loopback.js';

const GRANT_ALIASES: Record<string, string> = {
  device_code: DEVICE_GRANT,
  token_exchange: TOKEN_EXCHANGE_GRANT,
};
const PUBLIC_GRANTS = new Set(['authorization_code', 'refresh_token', DEVICE_GRANT]);

/** A role's name; the routes check that the role exists (role-routes.ts). */
const role = z.string().regex(ROLE_NAME, 'not a role name');
const grantType = z
  .string()
  .transform((g) => GRANT_ALIASES[g] ?? g)
  .pipe(
    z.enum([
      'authorization_code',
      'refresh_token',
      'client_credentials',
      DEVICE_GRANT,
      TOKEN_EXCHANGE_GRANT,
    ]),
  );

/** Members that only a private JWK has (RFC 7518 §6): a client registers public keys. */
const PRIVATE_JWK_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

/** One public signing key of a private_key_jwt client (README "private_key_jwt"). */
const publicJwk = z
  .object({ kty: z.enum(['EC', 'RSA']) })
  .catchall(z.unknown())
  .superRefine((jwk, ctx) => {
    const present = PRIVATE_JWK_MEMBERS.filter((m) => m in jwk);
    if (present.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `a private key was sent (${present.join(', ')}): register the public key only`,
      });
    }
  });

/** https, or http on a loopback host (development and tests; refused in production). */
const jwksUri = z
  .url()
  .refine((u) => isHttpsOrLoopback(u), 'must be an https URL (http only for localhost)');

const clientName = z.string().min(1).max(100);
const redirectUris = z.array(z.url()).max(20);
const scope = z.string().max(1000);
const clientRoles = z.array(role).max(10);

/** RFC 7591 §2 client metadata (our subset), RFC 9449's `dpop_bound_access_tokens`, our extras. */
export const newClientSchema = z
  .object({
    client_id: z
      .string()
      .regex(/^[A-Za-z0-9._~-]{3,64}$/, 'letters, digits and . _ ~ - only, 3 to 64 characters')
      .optional(),
    client_name: clientName.optional(),
    redirect_uris: redirectUris.default([]),
    post_logout_redirect_uris: redirectUris.optional(),
    grant_types: z.array(grantType).min(1).default(['authorization_code', 'refresh_token']),
    response_types: z.array(z.literal('code')).optional(),
    token_endpoint_auth_method: z.enum(CLIENT_AUTH_METHODS).default('client_secret_basic'),
    /** private_key_jwt: the client's public keys, inline or by URL (one of the two). */
    jwks: z
      .object({ keys: z.array(publicJwk).min(1).max(10) })
      .strict()
      .optional(),
    jwks_uri: jwksUri.optional(),
    token_endpoint_auth_signing_alg: z.enum(CLIENT_ASSERTION_ALGS).optional(),
    /** private_key_jwt: accept RFC 7523's first audiences too (README "private_key_jwt"). */
    [LEGACY_AUDIENCE]: z.boolean().optional(),
    /** A resource server that may introspect tokens (README "Token introspection"). */
    introspection: z.boolean().optional(),
    scope: scope.optional(),
    roles: clientRoles.optional(),
    first_party: z.boolean().optional(),
    /** Every sign-in for this client needs a second factor (README "Multi-factor sign-in"). */
    require_mfa: z.boolean().optional(),
    /** false: no sign-up at this client's sign-in even when SIGNUP=open (README "Sign-up"). */
    signup: z.boolean().optional(),
    /** The client must send a DPoP proof with every token request (README "DPoP"). */
    dpop_bound_access_tokens: z.boolean().optional(),
    /** native: an app on the user's device (RFC 8252, README "Native apps"). */
    application_type: z.enum(['web', 'native']).optional(),
    /** The client must push its authorization requests first (README "PAR"). */
    require_pushed_authorization_requests: z.boolean().optional(),
    /** FAPI 2.0 Security Profile (README "FAPI 2.0"): its rules are in oauth/fapi.ts. */
    fapi: z.literal('2.0').optional(),
    /** RFC 8693: the audiences this client may exchange user tokens for (README "Token exchange"). */
    token_exchange: tokenExchangePolicySchema.optional(),
    /** RFC 9396 types it may ask for; default all (README "Payment authorization details"). */
    authorization_details_types: z.array(z.literal(PAYMENT_DETAIL_TYPE)).max(1).optional(),
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
    const usesKeys = c.token_endpoint_auth_method === 'private_key_jwt';
    if (usesKeys && (c.jwks === undefined) === (c.jwks_uri === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['jwks'],
        message: 'private_key_jwt needs exactly one of jwks and jwks_uri',
      });
    }
    if (c[LEGACY_AUDIENCE] && !usesKeys) {
      ctx.addIssue({
        code: 'custom',
        path: [LEGACY_AUDIENCE],
        message: 'only for a private_key_jwt client',
      });
    }
    if (c[LEGACY_AUDIENCE] && c.fapi) {
      ctx.addIssue({
        code: 'custom',
        path: [LEGACY_AUDIENCE],
        message:
          'not allowed for a FAPI 2.0 client: its assertions must name the issuer as their audience',
      });
    }
    if (!usesKeys && (c.jwks || c.jwks_uri || c.token_endpoint_auth_signing_alg)) {
      ctx.addIssue({
        code: 'custom',
        path: ['token_endpoint_auth_method'],
        message: 'jwks, jwks_uri and token_endpoint_auth_signing_alg are for private_key_jwt',
      });
    }
    if (c.grant_types.includes('authorization_code') && c.redirect_uris.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['redirect_uris'],
        message: 'required for authorization_code',
      });
    }
    // Post-logout targets are redirects too: the same rules (README "Native apps").
    for (const member of ['redirect_uris', 'post_logout_redirect_uris'] as const) {
      for (const message of redirectProblems(c.application_type ?? 'web', c[member] ?? [])) {
        ctx.addIssue({ code: 'custom', path: [member], message });
      }
    }
    if (c.application_type === 'native' && !isPublic) {
      ctx.addIssue({
        code: 'custom',
        path: ['token_endpoint_auth_method'],
        message: 'a native app cannot keep a secret: use none (with PKCE)',
      });
    }
    if (c.introspection && isPublic) {
      ctx.addIssue({
        code: 'custom',
        path: ['introspection'],
        message: 'only for a confidential client (a resource server authenticates)',
      });
    }
    if (c.token_exchange && !mayExchangeTokens(c.token_endpoint_auth_method)) {
      ctx.addIssue({
        code: 'custom',
        path: ['token_exchange'],
        message: EXCHANGE_NEEDS_AUTHENTICATION,
      });
    }
    if (c.grant_types.includes(TOKEN_EXCHANGE_GRANT) && !c.token_exchange) {
      ctx.addIssue({
        code: 'custom',
        path: ['token_exchange'],
        message: 'required for the token-exchange grant: the audiences this client may ask for',
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

/** Redirect URIs by application type (README "Native apps"): web http(s); native per RFC 8252. */
export function redirectProblems(type: 'web' | 'native', uris: string[]): string[] {
  const problems: string[] = [];
  for (const uri of uris) {
    const url = URL.parse(uri);
    if (!url) continue; // the url check names it
    const web = url.protocol === 'https:' || url.protocol === 'http:';
    if (type === 'web' && !web) {
      problems.push(`${uri}: a web client redirects to http(s); a custom scheme is for native`);
    } else if (type === 'native' && url.protocol === 'http:') {
      if (!LOOPBACK_IPS.has(url.hostname)) {
        problems.push(`${uri}: a native app's http redirect must be 127.0.0.1 or [::1]`);
      }
    } else if (
      type === 'native' &&
      !web &&
      !/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(url.protocol)
    ) {
      problems.push(`${uri}: a private-use scheme must be reverse DNS (com.example.app:/cb)`);
    }
  }
  return problems;
}

/** PATCH /admin/clients/:id: members checked as at creation; empty `scope`/`roles` removes it. */
export const clientPatchSchema = z
  .object({
    client_name: clientName.optional(),
    redirect_uris: redirectUris.optional(),
    scope: scope.optional(),
    roles: clientRoles.optional(),
    /** null: no more token exchange for this client. */
    token_exchange: tokenExchangePolicySchema.nullable().optional(),
  })
  .strict()
  .refine(
    (p) => Object.keys(p).length > 0,
    'name at least one of client_name, redirect_uris, scope, roles, token_exchange',
  );

export type ClientPatch = z.output<typeof clientPatchSchema>;

/** PATCH /admin/users/:id. */
export const userPatchSchema = z.object({ roles: z.array(role).max(10) }).strict();

/** POST /admin/users/:id/password: a new password, or one generated and shown once. */
export const passwordResetSchema = z
  .object({ password: z.string().max(1024).optional(), generate: z.literal(true).optional() })
  .strict()
  .refine((b) => (b.password === undefined) !== (b.generate === undefined), {
    message: 'send either password or generate: true',
    path: ['password'],
  });

export const newUserSchema = z
  .object({
    email: z.email().max(320),
    password: z.string().max(1024),
    roles: z.array(role).max(10).default([]),
    name: z.string().min(1).max(200).nullish(),
  })
  .strict();

/** `activate: 'now'` skips the publish lead (emergency rotation): see oauth/keys.ts. */
export const rotateKeySchema = z
  .object({
    alg: z.enum(['RS256', 'ES256']).optional(),
    activate: z.enum(['now', 'scheduled']).default('scheduled'),
  })
  .strict();

export const listQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().max(200).optional(),
  // An audit row id (bigint): at most 15 digits, so it stays a safe integer and in range.
  before: z
    .string()
    .regex(/^\d{1,15}$/, 'a row id: nextBefore of the previous page')
    .optional(),
  kind: z.string().max(64).optional(),
});

/** A search text (`?q=`): a case-insensitive substring; empty searches for nothing in particular. */
const searchText = z.string().max(200).optional();

/** An instant with its offset (`2026-01-02T03:04:05Z`, `…+01:00`). */
const instant = z.iso
  .datetime({ offset: true, message: 'an ISO 8601 date-time with an offset (…Z or …+01:00)' })
  .transform((s) => new Date(s));

/** GET /admin/users. */
export const userListQuerySchema = listQuerySchema
  .pick({ limit: true, after: true })
  .extend({ q: searchText });

/** GET /admin/clients. */
export const clientListQuerySchema = z.object({ q: searchText });

/** GET /admin/audit: each filter narrows; `since` inclusive, `until` exclusive. */
export const auditQuerySchema = listQuerySchema
  .pick({ limit: true, before: true, kind: true })
  .extend({
    actor: z.string().max(200).optional(),
    subject: z.string().max(200).optional(),
    client_id: z.string().max(200).optional(),
    since: instant.optional(),
    until: instant.optional(),
  });

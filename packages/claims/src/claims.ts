import { z } from 'zod';

/** Claims this project reads from its access tokens (RFC 9068 §2.2 plus `roles`, `email`, `grant_id`; `acr`, `amr`, `auth_time` of the sign-in, RFC 9068 §2.2.1). */
export interface AccessTokenClaims {
  iss: string;
  /** RFC 7519 allows a string or an array; verification checks it contains the API audience. */
  aud: string | string[];
  /** A user id, or `client:<client_id>` for client-credentials tokens. */
  sub: string;
  client_id: string;
  /** Space-delimited OAuth scope; '' when absent. */
  scope: string;
  roles: string[];
  /** Unix seconds. */
  iat: number;
  /** Unix seconds. */
  exp: number;
  nbf?: number;
  jti: string;
  email?: string;
  /** oidc-provider grant id: lets a whole grant be revoked at once. */
  grant_id?: string;
  /** When the grant was created, Unix seconds with milliseconds (logout everywhere). */
  grant_iat?: number;
  /**
   * Confirmation (RFC 7800): `jkt` is the SHA-256 thumbprint of the client's DPoP key
   * (RFC 9449 §6). A token with `cnf` is sender-constrained: never accepted as Bearer.
   */
  cnf?: { jkt?: string };
  /** The sign-in's Authentication Context Class Reference (ACR in step-up.ts). */
  acr?: string;
  /** How the user signed in (RFC 8176 values: `pwd`, `otp`, `mfa`, …). */
  amr?: string[];
  /** When the user signed in, Unix seconds: the age a step-up `max_age` bounds. */
  auth_time?: number;
}

/** Prefix of client-credentials subjects, so a client id can never equal a user id. */
export const CLIENT_SUBJECT_PREFIX = 'client:';

const text = z.string().min(1).max(1024);
const numericDate = z.number().finite().nonnegative();

/** Shape check of a verified payload; time, issuer and audience are checked in verify.ts with their own codes. */
export const accessTokenClaimsSchema = z
  .object({
    iss: text,
    aud: z.union([text, z.array(text).min(1).max(20)]),
    sub: text,
    client_id: text,
    scope: z.string().max(2048).default(''),
    roles: z.array(z.string().max(100)).max(50).default([]),
    iat: numericDate,
    exp: numericDate,
    nbf: numericDate.optional(),
    jti: text,
    email: z.string().max(320).optional(),
    grant_id: text.optional(),
    grant_iat: numericDate.optional(),
    // Other confirmation methods (e.g. mTLS `x5t#S256`) stay in the object, so a token
    // bound some other way is still refused as a bearer token.
    cnf: z
      .looseObject({
        jkt: z
          .string()
          .regex(/^[A-Za-z0-9_-]{43}$/)
          .optional(),
      })
      .optional(),
    acr: text.optional(),
    amr: z.array(z.string().min(1).max(64)).max(20).optional(),
    auth_time: numericDate.optional(),
  })
  // A client subject must name its own client; and a bare `sub` equal to `client_id` is
  // oidc-provider's default client-credentials subject, ambiguous with a user id: refused.
  .refine(
    (c) =>
      c.sub.startsWith(CLIENT_SUBJECT_PREFIX)
        ? c.sub === CLIENT_SUBJECT_PREFIX + c.client_id
        : c.sub !== c.client_id,
    { message: 'sub does not follow the client:<client_id> convention', path: ['sub'] },
  );

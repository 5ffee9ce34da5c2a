import { ROLE_NAME } from '@portcullis/db';
import { z } from 'zod';

// Clients nobody registered by hand (README "Dynamic client registration", "Client ID
// Metadata Documents"): what the operator allows them.

const GRANT_TYPES = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
  'urn:ietf:params:oauth:grant-type:device_code',
] as const;

const list = (known: readonly string[], what: string) =>
  z
    .string()
    .transform((v) => [...new Set(v.split(/[\s,]+/).filter(Boolean))])
    .refine((values) => values.every((v) => known.includes(v)), {
      error: `must list only known ${what} (${known.join(', ')})`,
    });

// RFC 6749 §3.3 scope-token characters.
const SCOPE_VALUE = /^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/;

const HOST_PATTERN = /^(\*\.)?[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:\d{1,5})?$/;

export const agentClientVariables = {
  /** off | token (initial access tokens from the admin API) | open (anonymous, limited per IP). */
  REGISTRATION: z.enum(['off', 'token', 'open']).default('off'),
  /**
   * The scopes a dynamically registered client may ask for (and gets when it names none); the
   * server checks at start that each is an OIDC scope, `api` or a registered permission.
   */
  REGISTRATION_SCOPES: z
    .string()
    .transform((v) => [...new Set(v.split(/[\s,]+/).filter(Boolean))])
    .refine((values) => values.every((v) => SCOPE_VALUE.test(v)), {
      error: 'must list scope values',
    })
    .default(['openid', 'profile', 'email', 'offline_access', 'api']),
  REGISTRATION_GRANT_TYPES: list(GRANT_TYPES, 'grant types').default([
    'authorization_code',
    'refresh_token',
  ]),
  /** Roles a dynamically registered client may ask for (its client-credentials tokens); none by default. */
  REGISTRATION_ROLES: z
    .string()
    .transform((v) => [...new Set(v.split(/[\s,]+/).filter(Boolean))])
    .refine((values) => values.every((v) => ROLE_NAME.test(v)), {
      error: 'must list role names (the server checks at start that they exist)',
    })
    .default([]),
  /** Anonymous registrations per IP per window with REGISTRATION=open. */
  REGISTRATION_IP_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(10),
  REGISTRATION_LIMIT_WINDOW: z.coerce
    .number()
    .int()
    .min(1)
    .max(365 * 86_400)
    .default(3600),
  /** Seconds an initial access token stays valid unless the admin asks for another lifetime. */
  REGISTRATION_TOKEN_TTL: z.coerce
    .number()
    .int()
    .min(60)
    .max(365 * 86_400)
    .default(86_400),
  /** on: an https URL is a client_id whose document describes the client (public clients only). */
  CLIENT_ID_METADATA_DOCUMENTS: z.enum(['on', 'off']).default('on'),
  /** Comma-separated hosts (`*.example.com` for subdomains) whose documents are fetched; empty: any. */
  CLIENT_ID_METADATA_HOSTS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    )
    .refine((hosts) => hosts.every((h) => HOST_PATTERN.test(h)), {
      error: 'must be comma-separated host names, `*.example.com` for every subdomain',
    })
    .default([]),
};

export type RegistrationMode = 'off' | 'token' | 'open';

export interface AgentClientSettings {
  registration: Readonly<{
    mode: RegistrationMode;
    scopes: readonly string[];
    grantTypes: readonly string[];
    roles: readonly string[];
    ipLimit: number;
    windowSec: number;
    tokenTtl: number;
  }>;
  clientIdMetadata: Readonly<{ enabled: boolean; hosts: readonly string[] }>;
}

type Parsed = {
  [K in keyof typeof agentClientVariables]: z.output<(typeof agentClientVariables)[K]>;
};

export function agentClientSettingsOf(e: Parsed): AgentClientSettings {
  return Object.freeze({
    registration: Object.freeze({
      mode: e.REGISTRATION,
      scopes: e.REGISTRATION_SCOPES,
      grantTypes: e.REGISTRATION_GRANT_TYPES,
      roles: e.REGISTRATION_ROLES,
      ipLimit: e.REGISTRATION_IP_LIMIT,
      windowSec: e.REGISTRATION_LIMIT_WINDOW,
      tokenTtl: e.REGISTRATION_TOKEN_TTL,
    }),
    clientIdMetadata: Object.freeze({
      enabled: e.CLIENT_ID_METADATA_DOCUMENTS === 'on',
      hosts: e.CLIENT_ID_METADATA_HOSTS,
    }),
  });
}

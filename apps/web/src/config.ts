import { z } from 'zod';
import {
  ConfigError,
  parseEnvironment,
  placeholderSecrets,
  processSettingsOf,
  processVariables,
  tokenVariables,
  type ProcessSettings,
  webOriginOf,
  webVariables,
} from '@portcullis/observability';

/** A base URL; a trailing slash is dropped so paths can be appended. */
const baseUrl = z.url().transform((v) => v.replace(/\/+$/, ''));

const schema = z
  .object({
    ...processVariables,
    ...webVariables,
    ISSUER: baseUrl.default('http://localhost:4000'),
    API_URL: baseUrl.default('http://localhost:3000'),
    /** RFC 8707 resource indicator: the `aud` of access tokens for the API. */
    API_AUDIENCE: tokenVariables.API_AUDIENCE,
    WEB_CLIENT_ID: z.string().min(1).max(200).default('demo-spa'),
    WEB_SCOPE: z.string().min(1).default('openid profile email offline_access api'),
    /** Comma-separated secrets sealing the BFF's cookies; the first seals, all open. */
    COOKIE_KEYS: z
      .string()
      .transform((v) => v.split(',').map((k) => k.trim()))
      .pipe(z.array(z.string().min(32, 'each key must be at least 32 characters')).min(1))
      .optional(),
  })
  .transform((env) => ({
    ...env,
    WEB_ORIGIN: webOriginOf(env),
  }))
  .superRefine((env, ctx) => {
    if (env.NODE_ENV !== 'production') return;
    for (const key of ['WEB_ORIGIN', 'ISSUER', 'API_URL'] as const) {
      if (!env[key].startsWith('https://')) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'must be https in production' });
      }
    }
    if (!env.COOKIE_KEYS) {
      ctx.addIssue({ code: 'custom', path: ['COOKIE_KEYS'], message: 'is required in production' });
    }
    for (const { name, message } of placeholderSecrets(env, ['COOKIE_KEYS'])) {
      ctx.addIssue({ code: 'custom', path: [name], message });
    }
  });

type OwnConfig = Readonly<{
  port: number;
  origin: string;
  redirectUri: string;
  issuer: string;
  apiUrl: string;
  apiAudience: string;
  clientId: string;
  scope: string;
  /** Undefined outside production: server.ts generates keys under dataDir. */
  cookieKeys: readonly string[] | undefined;
}>;

export type WebConfig = ProcessSettings & OwnConfig;

export { ConfigError };

/** Parses the environment once; every problem is listed, each naming its variable. */
export function parseWebConfig(env: Record<string, string | undefined>): WebConfig {
  const e = parseEnvironment(schema, env);
  return Object.freeze({
    ...processSettingsOf(e),
    port: e.WEB_PORT,
    origin: e.WEB_ORIGIN,
    redirectUri: `${e.WEB_ORIGIN}/callback`,
    issuer: e.ISSUER,
    apiUrl: e.API_URL,
    apiAudience: e.API_AUDIENCE,
    clientId: e.WEB_CLIENT_ID,
    scope: e.WEB_SCOPE,
    cookieKeys: e.COOKIE_KEYS ? Object.freeze(e.COOKIE_KEYS) : undefined,
  });
}

/** parseWebConfig of this process's environment (entry points may not read it). */
export function webConfigFromEnv(): WebConfig {
  return parseWebConfig(process.env);
}

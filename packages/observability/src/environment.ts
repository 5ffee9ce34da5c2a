// What every app's config.ts parses alike (README "Configuration"); an app's own stay in its config.ts.
import { z } from 'zod';
import { ConfigError } from './lifecycle.js';

/** NODE_ENV, DATA_DIR, LOG_LEVEL and LOG_FORMAT: read by every app. */
export const processVariables = {
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  /** Embedded database, generated secrets, uploads. */
  DATA_DIR: z.string().min(1).default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Unset: readable lines on a terminal, JSON otherwise (logger.ts). */
  LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
};

export type ProcessSettings = Readonly<{
  env: 'development' | 'test' | 'production';
  dataDir: string;
  logLevel: string;
  logFormat: 'json' | 'pretty' | undefined;
}>;

export function processSettingsOf(e: {
  NODE_ENV: ProcessSettings['env'];
  DATA_DIR: string;
  LOG_LEVEL: string;
  LOG_FORMAT?: 'json' | 'pretty' | undefined;
}): ProcessSettings {
  return { env: e.NODE_ENV, dataDir: e.DATA_DIR, logLevel: e.LOG_LEVEL, logFormat: e.LOG_FORMAT };
}

/** ISSUER and API_AUDIENCE: the exact `iss` and `aud` of the API's access tokens. */
export const tokenVariables = {
  ISSUER: z.url().default('http://localhost:4000'),
  API_AUDIENCE: z.url().default('http://localhost:3000'),
};

/** TRUST_PROXY: X-Forwarded-For's right-most entry is the address every limit counts against. */
export const proxyVariables = {
  TRUST_PROXY: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .default(false),
};

/** A port to listen on; 0 takes a free one (tests). */
export const portVariable = (fallback: number) =>
  z.coerce.number().int().min(0).max(65535).default(fallback);

/** WEB_PORT and WEB_ORIGIN: also read by the auth server's demo seed for `demo-spa`'s redirect URI. */
export const webVariables = {
  WEB_PORT: portVariable(5173),
  WEB_ORIGIN: z
    .url()
    .refine((v) => new URL(v).origin === v, 'must be an origin such as http://localhost:5173')
    .optional(),
};

/** The demo's origin: WEB_ORIGIN, or http://localhost:$WEB_PORT where it listens. */
export function webOriginOf(e: { WEB_PORT: number; WEB_ORIGIN?: string | undefined }): string {
  return e.WEB_ORIGIN ?? `http://localhost:${e.WEB_PORT}`;
}

/** An empty variable counts as unset; throws one ConfigError listing every problem. */
export function parseEnvironment<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
): z.output<S> {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const result = schema.safeParse(present);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`));
  }
  return result.data;
}

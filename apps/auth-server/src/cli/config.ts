import { z } from 'zod';
import {
  ConfigError,
  parseEnvironment,
  portVariable,
  processVariables,
} from '@portcullis/observability';

const schema = z.object({
  /** The auth server's ADMIN_PORT, read as the server reads it. */
  ADMIN_PORT: portVariable(4001),
  ADMIN_URL: z.url().optional(),
  ADMIN_TOKEN: z.string().min(1).optional(),
  DATA_DIR: processVariables.DATA_DIR,
});

export type CliConfig = Readonly<{
  adminUrl: string;
  adminToken: string | undefined;
  dataDir: string;
}>;

export { ConfigError };

/**
 * The admin CLI's environment (README "Configuration"), parsed as the servers parse theirs
 * (a ConfigError naming each problem; the CLI exits 78): the admin API is at ADMIN_URL,
 * else http://127.0.0.1:$ADMIN_PORT where the auth server binds it; ADMIN_TOKEN, else
 * DATA_DIR/admin-token.
 */
export function parseCliConfig(env: Record<string, string | undefined> = process.env): CliConfig {
  const e = parseEnvironment(schema, env);
  const adminUrl = e.ADMIN_URL ?? `http://127.0.0.1:${e.ADMIN_PORT}`;
  return Object.freeze({
    adminUrl: adminUrl.replace(/\/$/, ''),
    adminToken: e.ADMIN_TOKEN,
    dataDir: e.DATA_DIR,
  });
}

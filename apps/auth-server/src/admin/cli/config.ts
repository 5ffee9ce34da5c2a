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

/** The admin CLI's environment (ADMIN_URL or ADMIN_PORT, ADMIN_TOKEN or DATA_DIR/admin-token). */
export function parseCliConfig(env: Record<string, string | undefined> = process.env): CliConfig {
  const e = parseEnvironment(schema, env);
  const adminUrl = e.ADMIN_URL ?? `http://127.0.0.1:${e.ADMIN_PORT}`;
  return Object.freeze({
    adminUrl: adminUrl.replace(/\/$/, ''),
    adminToken: e.ADMIN_TOKEN,
    dataDir: e.DATA_DIR,
  });
}

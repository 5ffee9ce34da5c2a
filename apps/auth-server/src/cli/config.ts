import { z } from 'zod';

const schema = z.object({
  ADMIN_PORT: z.coerce.number().int().min(1).max(65535).default(4001),
  ADMIN_URL: z.url().optional(),
  ADMIN_TOKEN: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
});

export type CliConfig = Readonly<{
  adminUrl: string;
  adminToken: string | undefined;
  dataDir: string;
}>;

/** The admin CLI's configuration could not be read: exit 78, as the servers do. */
export class CliConfigError extends Error {}

/**
 * The admin CLI's environment (README "Configuration"): the admin API is at ADMIN_URL,
 * else http://127.0.0.1:$ADMIN_PORT where the auth server binds it; ADMIN_TOKEN, else
 * DATA_DIR/admin-token.
 */
export function parseCliConfig(env: Record<string, string | undefined> = process.env): CliConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const result = schema.safeParse(present);
  if (!result.success) {
    throw new CliConfigError(
      result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n'),
    );
  }
  const adminUrl = result.data.ADMIN_URL ?? `http://127.0.0.1:${result.data.ADMIN_PORT}`;
  return Object.freeze({
    adminUrl: adminUrl.replace(/\/$/, ''),
    adminToken: result.data.ADMIN_TOKEN,
    dataDir: result.data.DATA_DIR,
  });
}

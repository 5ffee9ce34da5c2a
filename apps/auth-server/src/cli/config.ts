import { z } from 'zod';

const schema = z.object({
  ADMIN_URL: z.url().default('http://127.0.0.1:4001'),
  ADMIN_TOKEN: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
});

export type CliConfig = Readonly<{
  adminUrl: string;
  adminToken: string | undefined;
  dataDir: string;
}>;

/** The admin CLI's environment: ADMIN_URL, ADMIN_TOKEN (else DATA_DIR/admin-token). */
export function parseCliConfig(env: Record<string, string | undefined> = process.env): CliConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ''));
  const result = schema.safeParse(present);
  if (!result.success) {
    throw new Error(result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n'));
  }
  return Object.freeze({
    adminUrl: result.data.ADMIN_URL.replace(/\/$/, ''),
    adminToken: result.data.ADMIN_TOKEN,
    dataDir: result.data.DATA_DIR,
  });
}

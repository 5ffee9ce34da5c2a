import { z } from 'zod';
import { ConfigError, parseEnvironment, tokenVariables } from '@portcullis/observability';

const schema = z.object({
  ISSUER: tokenVariables.ISSUER,
  /** A command that opens a URL (the convention of xdg-open, git and Python's webbrowser). */
  BROWSER: z.string().min(1).optional(),
});

/** The public native client `npm run authorize` uses unless told another (the demo seeds it). */
export const DEMO_CLI_CLIENT_ID = 'demo-cli';
export const DEMO_CLI_REDIRECT_URI = 'http://127.0.0.1/callback';

export type AuthorizeConfig = Readonly<{ issuer: string; browser: string | undefined }>;

export { ConfigError };

/** `npm run authorize`'s environment: the server's ISSUER, and BROWSER to open the sign-in. */
export function parseAuthorizeConfig(
  env: Record<string, string | undefined> = process.env,
): AuthorizeConfig {
  const e = parseEnvironment(schema, env);
  return Object.freeze({ issuer: e.ISSUER.replace(/\/$/, ''), browser: e.BROWSER });
}

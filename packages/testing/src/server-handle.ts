import type { Db } from '@portcullis/db';

/** Response bodies as tests read them: any shape, asserted by the test itself. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JsonBody = Record<string, any>;

export interface AdminResponse {
  status: number;
  body: JsonBody;
  res: Response;
}

/**
 * What the light helpers use of a test auth server, so that this entry needs no auth server:
 * `startTestAuthServer` (`@portcullis/testing/auth-server`) returns one with more.
 */
export interface AuthServerHandle {
  server: { url: string };
  /** The server's database: its own fresh one, or the `db` it was given. */
  database: { db: Db; close(): Promise<void> };
  issuer: string;
  /** A call of the admin API; `token: null` sends none. */
  admin(
    method: string,
    pathname: string,
    body?: unknown,
    token?: string | null,
  ): Promise<AdminResponse>;
}

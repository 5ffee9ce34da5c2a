import { parseApiConfig, startApiServer, type RunningApiServer } from '@portcullis/api';
import type { Db } from '@portcullis/db';
import { pino } from 'pino';

/**
 * The demo API beside a test auth server, on its database, at the port of `apiUrl` (its
 * API_AUDIENCE), step-up off: what the console's status page and outside services call.
 */
export function startApiBeside(
  auth: { issuer: string; database: { db: Db } },
  apiUrl: string,
  dataDir: string,
): Promise<RunningApiServer> {
  return startApiServer(
    parseApiConfig({
      NODE_ENV: 'test',
      API_PORT: new URL(apiUrl).port,
      ISSUER: auth.issuer,
      API_AUDIENCE: apiUrl,
      DATA_DIR: dataDir,
      STEP_UP: 'off',
    }),
    { db: auth.database.db, logger: pino({ level: 'silent' }) },
  );
}

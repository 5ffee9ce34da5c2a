import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { drainOnClose, guardRequests } from '@portcullis/observability';
import { createWebApp, type WebDeps } from './app.js';
import type { WebConfig } from './config.js';

export interface RunningWebServer {
  url: string;
  close(): Promise<void>;
}

/** Cookie keys from COOKIE_KEYS, else one kept in DATA_DIR/web-cookie-key (not in production). */
async function cookieKeys(config: WebConfig): Promise<readonly string[]> {
  if (config.cookieKeys) return config.cookieKeys;
  const file = path.join(config.dataDir, 'web-cookie-key');
  try {
    return [(await readFile(file, 'utf8')).trim()];
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const key = randomBytes(32).toString('base64url');
  await mkdir(config.dataDir, { recursive: true });
  try {
    await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
    return [key];
  } catch (error) {
    // Another instance wrote it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      return [(await readFile(file, 'utf8')).trim()];
    throw error;
  }
}

export async function startWebServer(
  config: WebConfig,
  deps: Omit<WebDeps, 'cookieKeys'> & Partial<Pick<WebDeps, 'cookieKeys'>>,
): Promise<RunningWebServer> {
  const app = createWebApp(config, {
    ...deps,
    cookieKeys: deps.cookieKeys ?? (await cookieKeys(config)),
  });
  const server: Server = createServer(guardRequests(app.callback()));
  // Requests under way at shutdown are answered, not cut (README "Operating it", Shutdown).
  const drain = drainOnClose(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = config.port === 0 ? `http://localhost:${port}` : config.origin;
  deps.logger.info({ url, issuer: config.issuer, api: config.apiUrl }, 'web demo listening');
  return {
    url,
    close: () => drain.close(),
  };
}

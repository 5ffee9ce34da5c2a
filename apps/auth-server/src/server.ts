import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAuthApp, type AuthDeps } from './app.js';
import type { AuthConfig } from './config.js';

export interface RunningAuthServer {
  url: string;
  close(): Promise<void>;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    server.closeIdleConnections();
  });
}

/** Listens on config.port (0 picks a free port, as tests do). */
export async function startAuthServer(
  config: AuthConfig,
  deps: AuthDeps,
): Promise<RunningAuthServer> {
  const app = createAuthApp(config, deps);
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(config.port, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => closeServer(server),
  };
}

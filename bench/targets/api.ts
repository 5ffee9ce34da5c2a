// The API on the benchmark's PostgreSQL database. BENCH_AUTH=off swaps token verification
// for a resolver that returns a fixed admin principal: the same routes, handlers and
// queries without authentication, which is the figure an authenticated run is held to.
import { appendFileSync } from 'node:fs';
import { pino } from 'pino';
import { createDb } from '@portcullis/db';
import { parseApiConfig, PERMISSIONS, startApiServer } from '@portcullis/api';
import type { Principal } from '@portcullis/claims';

const config = parseApiConfig({
  // One token carries the whole load: the per-subject limit would answer 429 (still counted).
  JWT_RATE_LIMIT: '1000000',
  JWT_RATE_WINDOW: '1',
  ...process.env,
  API_PORT: '0',
  API_AUDIENCE: 'http://localhost:3000',
});
const db = createDb({ databaseUrl: config.databaseUrl, poolMax: 10 });
const admin: Principal = Object.freeze({
  subject: 'bench-admin',
  kind: 'user',
  roles: ['admin'],
  permissions: [...PERMISSIONS], // everything, as the admin role grants
  scope: ['api'],
  authMethod: 'jwt',
});
const server = await startApiServer(config, {
  db,
  logger: pino({ level: 'silent' }),
  ...(process.env['BENCH_AUTH'] === 'off' ? { resolvers: [() => Promise.resolve(admin)] } : {}),
});
// BENCH_MEMORY_LOG: one line of process.memoryUsage() every 5 s (the mixed section's soak).
const memoryLog = process.env['BENCH_MEMORY_LOG'];
if (memoryLog) {
  setInterval(() => {
    appendFileSync(memoryLog, `${JSON.stringify({ at: Date.now(), ...process.memoryUsage() })}\n`);
  }, 5000).unref();
}
console.log(JSON.stringify({ url: server.url }));
process.on('SIGTERM', async () => {
  await server.close();
  await db.destroy();
  process.exit(0);
});

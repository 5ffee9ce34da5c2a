import type { IncomingMessage, ServerResponse } from 'node:http';
import { READINESS_RETRY_AFTER } from './readiness.js';

function json(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** Between binding and app built: alive on /healthz, not ready, 503 + Retry-After elsewhere. */
export function startingHandler(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  if (path === '/healthz') return json(res, 200, { status: 'ok' });
  res.setHeader('retry-after', READINESS_RETRY_AFTER);
  if (path === '/readyz') return json(res, 503, { status: 'starting' });
  json(res, 503, {
    error: 'temporarily_unavailable',
    error_description: 'the service is starting; retry later',
  });
}

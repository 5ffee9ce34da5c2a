import { readFileSync } from 'node:fs';
import type { Middleware } from 'koa';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
};

/**
 * The SPA's few files, read once at start and served from memory. A fixed table, not a
 * directory walk: nothing else under public/ (or outside it) can ever be served. `/` and
 * unknown GETs of HTML pages get index.html (the SPA has one page).
 */
export function staticFiles(dir: URL, files: readonly string[]): Middleware {
  const table = new Map<string, { body: Buffer; type: string }>();
  for (const name of files) {
    const ext = name.slice(name.lastIndexOf('.'));
    table.set(`/${name}`, {
      body: readFileSync(new URL(name, dir)),
      type: TYPES[ext] ?? 'application/octet-stream',
    });
  }
  const index = table.get('/index.html');
  return async function serveStatic(ctx, next) {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const file = ctx.path === '/' ? index : table.get(ctx.path);
    if (!file) return next();
    ctx.type = file.type;
    // Revalidate every time: a new deploy is picked up at once, and files are tiny.
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = file.body;
  };
}

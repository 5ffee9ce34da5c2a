import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Middleware } from 'koa';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
};

/** The SPA's files, a fixed table read once at start: nothing else under `dir` can be served. */
export function staticFiles(dir: URL, files: readonly string[]): Middleware {
  const table = new Map<string, { body: Buffer; type: string }>();
  for (const name of files) {
    const ext = name.slice(name.lastIndexOf('.'));
    const file = new URL(name, dir);
    if (!existsSync(file)) {
      throw new Error(`${fileURLToPath(file)} is missing: run \`pnpm build\` to build the page`);
    }
    table.set(`/${name}`, {
      body: readFileSync(file),
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

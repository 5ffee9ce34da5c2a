/**
 * `pnpm build`: compiles each app's entry point ahead of time into one ES module under
 * its dist/ folder, so production, containers and the benchmark run plain JavaScript on
 * Node instead of transpiling TypeScript at runtime through tsx (which costs memory for
 * the transpiled sources and their source maps, and start-up time).
 *
 * Our own code (apps and packages/*) is bundled; every third-party package stays an
 * import of node_modules, resolved here exactly as Node would resolve it from the
 * importing file and written as a path relative to the output, so pnpm's strict layout
 * (a package sees only its own dependencies) holds in the bundle too.
 *
 *   node infra/scripts/build.mjs                  # the apps, the admin CLI and the demo's page
 *   node infra/scripts/build.mjs <entry> <out>    # one entry (the benchmark's targets)
 *
 * An entry that serves the browser demo (the web app, start-all) brings its page along.
 */
import { build } from 'esbuild';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const ENTRIES = [
  ['apps/auth-server/src/main.ts', 'apps/auth-server/dist/main.js'],
  ['apps/auth-server/src/admin/cli/admin.ts', 'apps/auth-server/dist/admin.js'],
  ['apps/api/src/main.ts', 'apps/api/dist/main.js'],
  ['apps/web/src/main.ts', 'apps/web/dist/main.js'],
  ['infra/scripts/start-all.ts', 'infra/dist/start-all.js'],
  ['infra/scripts/migrate.ts', 'infra/dist/migrate.js'],
];

/** Entries whose process serves the browser demo, and so needs its page built. */
const SERVES_PAGE = new Set(['apps/web/src/main.ts', 'infra/scripts/start-all.ts']);

/**
 * The browser demo's page (apps/web/src/page, on packages/client) bundled for browsers:
 * `app.js`, and `dpop.js`, the SDK's DPoP module on its own (for scripts that sign with
 * the page's key, as the browser tests do). apps/web serves both from here (PAGE_FILES).
 */
export const PAGE_DIR = 'apps/web/dist/page';
const PAGE_ENTRIES = { app: 'apps/web/src/page/main.ts', dpop: 'packages/client/src/dpop.ts' };

/**
 * Writes the page's bundles into `outdir` (relative to the repository, or absolute). Each
 * file is replaced whole (written aside, then renamed), so a server starting meanwhile, or
 * another build, never reads half a bundle.
 */
export async function buildPage(outdir = PAGE_DIR) {
  const { outputFiles } = await build({
    absWorkingDir: root,
    entryPoints: PAGE_ENTRIES,
    outdir: path.resolve(root, outdir),
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    legalComments: 'none',
    logLevel: 'warning',
    write: false,
  });
  await mkdir(path.resolve(root, outdir), { recursive: true });
  await Promise.all(
    outputFiles.map(async (file) => {
      const aside = `${file.path}.${process.pid}-${Math.random().toString(36).slice(2)}`;
      await writeFile(aside, file.contents);
      await rename(aside, file.path);
    }),
  );
}

/**
 * V8 heap settings the containers (and the benchmark) run the compiled apps with, as
 * NODE_OPTIONS. Left to itself on a large machine, V8 grows the young generation to
 * 3 x 64 MB and lets garbage pile up in the old one: the auth server then peaks near
 * 350 MB under load with about 30 MB live. Capped, it peaks under 200 MB (the API under
 * 150 MB) at about the same throughput. Override NODE_OPTIONS for a larger heap.
 */
export const HEAP_OPTIONS = '--max-semi-space-size=8 --max-old-space-size=128';

/** Bare imports outside the workspace stay external, as paths into node_modules. */
const nodeModulesExternal = {
  name: 'node-modules-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.path.startsWith('@portcullis/') || args.pluginData === 'resolving') return;
      if (args.path.startsWith('node:')) return { path: args.path, external: true };
      const resolved = await b.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'resolving',
      });
      if (resolved.errors.length > 0) return { errors: resolved.errors };
      // Node built-ins without the node: prefix resolve to themselves.
      if (!path.isAbsolute(resolved.path)) return { path: args.path, external: true };
      const outDir = path.dirname(b.initialOptions.outfile);
      let relative = path.relative(outDir, resolved.path).split(path.sep).join('/');
      if (!relative.startsWith('.')) relative = `./${relative}`;
      return { path: relative, external: true };
    });
  },
};

/**
 * `import.meta.url` in our sources keeps meaning the source file (apps/web finds its
 * public/ folder beside src/), wherever the bundle is written: it becomes the source's
 * path relative to the bundle, resolved against the bundle's own URL at runtime.
 */
const sourceImportMetaUrl = {
  name: 'source-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url') || args.path.includes('node_modules')) return;
      const outDir = path.dirname(b.initialOptions.outfile);
      const relative = path.relative(outDir, args.path).split(path.sep).join('/');
      const url = `new URL(${JSON.stringify(relative)}, import.meta.url).href`;
      return { contents: source.replaceAll('import.meta.url', url), loader: 'ts' };
    });
  },
};

/**
 * Compiles one entry into `outfile`; returns the repository's files it was made of (its
 * bundled sources). `sourcemap` and `target` as esbuild takes them.
 */
export async function buildEntry(entry, outfile, { sourcemap = 'linked', target = 'node24' } = {}) {
  if (SERVES_PAGE.has(entry)) await buildPage();
  const { metafile } = await build({
    absWorkingDir: root,
    entryPoints: [entry],
    outfile: path.resolve(root, outfile),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target,
    sourcemap,
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    plugins: [nodeModulesExternal, sourceImportMetaUrl],
  });
  return Object.keys(metafile.inputs);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [entry, outfile] = process.argv.slice(2);
  const entries = entry && outfile ? [[entry, outfile]] : ENTRIES;
  await Promise.all(entries.map(([e, o]) => buildEntry(e, o)));
  const page = entries.some(([e]) => SERVES_PAGE.has(e));
  console.error(
    `[build] ${[...entries.map(([, o]) => o), ...(page ? [PAGE_DIR] : [])].join(', ')}`,
  );
}

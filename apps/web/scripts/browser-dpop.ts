/**
 * public/dpop.js is the client SDK's DPoP module (packages/client/src/dpop.ts) as one
 * browser ES module: the page has no build step, and proofs must be made by one
 * implementation only. `pnpm --filter @portcullis/web generate` rewrites it;
 * test/browser-dpop.test.ts fails when it differs from the SDK's source.
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { format, resolveConfig } from 'prettier';

export const SOURCE = fileURLToPath(
  new URL('../../../packages/client/src/dpop.ts', import.meta.url),
);
export const OUTPUT = fileURLToPath(new URL('../public/dpop.js', import.meta.url));
export const REGENERATE_COMMAND = 'pnpm --filter @portcullis/web generate';

/**
 * The module's text: bundled (its one import inlined), types erased, nothing minified,
 * formatted with the repository's prettier config so the output is reproducible.
 */
export async function browserDpopModule(): Promise<string> {
  const result = await build({
    entryPoints: [SOURCE],
    // Paths in the output's comments are relative to this: the same from any cwd.
    absWorkingDir: fileURLToPath(new URL('..', import.meta.url)),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    legalComments: 'none',
    banner: { js: `// Generated from packages/client/src/dpop.ts by ${REGENERATE_COMMAND}.` },
  });
  const options = { ...(await resolveConfig(OUTPUT)), filepath: OUTPUT };
  return format(result.outputFiles[0]!.text, options);
}

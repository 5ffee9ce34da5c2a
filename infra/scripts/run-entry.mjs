/**
 * `npm run admin` and `npm run authorize`: a TypeScript entry compiled as `pnpm build` does
 * (build.mjs), kept under node_modules/.cache and run from there until one of its sources, or
 * the lockfile, changes. A command starts in about a quarter of tsx's time (docs/testing.md).
 *
 *   node infra/scripts/run-entry.mjs <entry.ts> [arguments…]
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildEntry } from './build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node infra/scripts/run-entry.mjs <entry.ts> [arguments…]');
  process.exit(64);
}

const cache = path.join(root, 'node_modules', '.cache', 'portcullis-run');
const name = entry.replace(/\.ts$/, '').replace(/[/\\]/g, '_');
const compiled = path.join(cache, `${name}.js`);
const inputsFile = path.join(cache, `${name}.inputs.json`);

/** Built after every file it was made of was last changed (a missing one: not fresh). */
function fresh() {
  if (!existsSync(compiled) || !existsSync(inputsFile)) return false;
  const built = statSync(compiled).mtimeMs;
  const inputs = JSON.parse(readFileSync(inputsFile, 'utf8'));
  return inputs.every((file) => {
    try {
      return statSync(path.join(root, file)).mtimeMs <= built;
    } catch {
      return false;
    }
  });
}

if (!fresh()) {
  mkdirSync(cache, { recursive: true });
  // Written aside and renamed: a command started meanwhile never runs half a bundle.
  const aside = path.join(cache, `${name}.${process.pid}.js`);
  const inputs = await buildEntry(entry, aside, {
    sourcemap: 'inline',
    // For the Node running it (npm run uses the one on PATH, 22 or later).
    target: `node${process.versions.node.split('.')[0]}`,
  });
  // The lockfile too: the bundle names installed packages by their paths.
  writeFileSync(inputsFile, JSON.stringify([...inputs, 'pnpm-lock.yaml']));
  renameSync(aside, compiled);
}
process.argv = [process.argv[0], compiled, ...args];
await import(pathToFileURL(compiled).href);

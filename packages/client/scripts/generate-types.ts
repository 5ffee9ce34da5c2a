// Regenerates src/generated/openapi.ts from a running API's /openapi.json (spec §9:
// "clients use it to generate types").
//   pnpm --filter @portcullis/client generate [-- <api base url or openapi.json url>]
// Default: http://localhost:3000/openapi.json. Writes only the generated file; the
// hand-written src/types.ts stays the public surface until it is switched over.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { format, resolveConfig } from 'prettier';

const arg = process.argv.slice(2).find((a) => a !== '--') ?? 'http://localhost:3000';
const source = new URL(arg.endsWith('.json') ? arg : `${arg.replace(/\/+$/, '')}/openapi.json`);
const target = fileURLToPath(new URL('../src/generated/openapi.ts', import.meta.url));

const ast = await openapiTS(source, { alphabetize: true });
const banner = `// Generated from ${source.href} by scripts/generate-types.ts. Do not edit.\n\n`;
await mkdir(dirname(target), { recursive: true });
const options = { ...(await resolveConfig(target)), filepath: target };
await writeFile(target, await format(banner + astToString(ast), options));
console.log(`wrote ${target}`);

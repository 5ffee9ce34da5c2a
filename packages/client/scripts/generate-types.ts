// Regenerates src/generated/openapi.ts from the API's OpenAPI document, so the SDK's
// types are the API's own.
//   pnpm client:generate                  the document built in-process from apps/api
//   pnpm --filter @portcullis/client generate -- http://localhost:3000
//                                         a running API's /openapi.json (to inspect a
//                                         deployment; do not check that output in)
// test/generated-drift.test.ts fails when the checked-in file differs from the
// in-process output.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { currentApiDocument, GENERATED_FILE, generateTypes } from './openapi-types.js';

const arg = process.argv.slice(2).find((a) => a !== '--');
let output: string;
if (arg === undefined) {
  output = await generateTypes(currentApiDocument());
} else {
  const url = new URL(arg.endsWith('.json') ? arg : `${arg.replace(/\/+$/, '')}/openapi.json`);
  output = await generateTypes(url, url.href);
}
await mkdir(dirname(GENERATED_FILE), { recursive: true });
await writeFile(GENERATED_FILE, output);
console.log(`wrote ${GENERATED_FILE}`);

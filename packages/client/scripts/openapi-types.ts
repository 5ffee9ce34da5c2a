// Turns the API's OpenAPI document into src/generated/openapi.ts. Shared by
// scripts/generate-types.ts (writes the file) and test/generated-drift.test.ts (compares
// it with the checked-in one), so both produce the same bytes.
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '@portcullis/api';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { format, resolveConfig } from 'prettier';

/** The checked-in output. */
export const GENERATED_FILE = fileURLToPath(
  new URL('../src/generated/openapi.ts', import.meta.url),
);

/** The command that rewrites GENERATED_FILE, for messages. */
export const REGENERATE_COMMAND = 'pnpm client:generate';

/**
 * The document GET /openapi.json serves, built in-process by apps/api on the default
 * configuration (no server, no database, no environment).
 */
export function currentApiDocument(): OpenAPI3 {
  return openApiDocument() as OpenAPI3;
}

/**
 * TypeScript declarations (`paths`, `components`, `operations`) for an OpenAPI
 * document, formatted with the repository's prettier config so the output is
 * byte-for-byte reproducible. `origin` names the source in the banner.
 */
export async function generateTypes(
  document: OpenAPI3 | URL,
  origin = 'openApiDocument() of @portcullis/api',
): Promise<string> {
  const ast = await openapiTS(document, { alphabetize: true });
  const banner =
    `// Generated from ${origin} by packages/client/scripts/generate-types.ts.\n` +
    `// Do not edit: change the API's zod schemas, then run \`${REGENERATE_COMMAND}\`.\n\n`;
  const options = { ...(await resolveConfig(GENERATED_FILE)), filepath: GENERATED_FILE };
  return format(banner + astToString(ast), options);
}

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ERROR_CODES } from './error-codes.js';

const DOC = path.resolve(import.meta.dirname, '../../../docs/api-contracts.md');

/** The rows of the "Error codes" table: code, status, services. */
async function documented() {
  const text = await readFile(DOC, 'utf8');
  const section = text.slice(text.indexOf('### Error codes'));
  const rows = [
    ...section.matchAll(/^\| `([a-z_]+)` \| (\d{3})(?: \((\d{3})\))? \|.*\| ([a-z, ]+) \|$/gm),
  ];
  return Object.fromEntries(
    rows.map(([, code, status, also, services]) => [
      code,
      {
        status: Number(status),
        ...(also ? { alsoStatus: Number(also) } : {}),
        services: services!.split(', '),
      },
    ]),
  );
}

describe('error codes', () => {
  it('docs/api-contracts.md lists exactly the codes, statuses and services of ERROR_CODES', async () => {
    expect(await documented()).toEqual(
      JSON.parse(JSON.stringify(ERROR_CODES)) as Record<string, unknown>,
    );
  });
});

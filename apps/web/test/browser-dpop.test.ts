// public/dpop.js must be the SDK's DPoP module as it is now (scripts/browser-dpop.ts).
import { readFile } from 'node:fs/promises';
import { describe, expect, test } from '@jest/globals';
import { browserDpopModule, OUTPUT, REGENERATE_COMMAND } from '../scripts/browser-dpop.js';

describe('public/dpop.js', () => {
  test(`is the SDK's packages/client/src/dpop.ts (else run ${REGENERATE_COMMAND})`, async () => {
    const checkedIn = await readFile(OUTPUT, 'utf8');
    expect(checkedIn === (await browserDpopModule())).toBe(true);
  });
});

import { execFileSync } from 'node:child_process';
import { expect, it } from '@jest/globals';
import { chromiumLaunch, glibcAtLeast, PACK_GLIBC } from '../src/browser.js';

// README "Browser demo": the browser tests' Chromium comes with the install. Besides the C
// library and libgcc (on every Linux that runs Node), what it links comes from the package
// too, so a machine without libnss3 and libnspr4 runs it.
const FROM_THE_SYSTEM = [
  'libc.so.6',
  'libdl.so.2',
  'libgcc_s.so.1',
  'libm.so.6',
  'libpthread.so.0',
];

it("the package's Chromium links no library from the system but glibc's and libgcc", async () => {
  const { executablePath, env, libraries } = await chromiumLaunch({});
  if (!glibcAtLeast(PACK_GLIBC)) {
    // Too old for the package's libraries: the system's are used, as before.
    expect(libraries).toBeUndefined();
    return;
  }
  const linked = execFileSync('ldd', [executablePath], { env, encoding: 'utf8' });
  const fromTheSystem = [...linked.matchAll(/^\s*(\S+) => (\S+)/gm)]
    .filter(([, , at]) => !at!.startsWith(`${libraries}/`))
    .map(([, name]) => name);
  expect(fromTheSystem.sort()).toEqual(FROM_THE_SYSTEM);
});

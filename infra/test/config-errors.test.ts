import { describe, expect, it } from '@jest/globals';
import { spawnScript } from './helpers/processes.js';

const run = (failure: string) =>
  spawnScript('infra/test/fixtures/config-loader.ts', { CONFIG_FAILURE: failure });

describe('exitOnConfigError', () => {
  it('reports a configuration error as one: every problem, no stack, exit 78', async () => {
    const p = await run('config');
    expect(await p.exited).toBe(78);
    expect(p.output()).toContain('invalid configuration:\n  PORT: must be a number\n  ISSUER');
    expect(p.output()).not.toMatch(/\n\s+at /);
  }, 30_000);

  it('lets any other start-up failure be what it is: its own error and stack, exit 1', async () => {
    const p = await run('bug');
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('TypeError: cannot read properties of undefined');
    expect(p.output()).toMatch(/\n\s+at /);
    expect(p.output()).not.toContain('invalid configuration');
  }, 30_000);

  it('goes on when the configuration is read', async () => {
    const p = await run('none');
    expect(await p.exited).toBe(0);
    expect(p.output()).toContain('configured');
  }, 30_000);
});

import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnScript, waitFor, type Spawned } from './helpers/processes.js';

// Drives the same script `npm start` runs, as a real process: both apps come up on an
// empty data directory, answer their health endpoints, and stop cleanly on SIGTERM.
const dataDir = mkdtempSync(path.join(tmpdir(), 'portcullis-start-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

const startAll = (env: Record<string, string>) => spawnScript('infra/scripts/start-all.ts', env);

describe('npm start (infra/scripts/start-all.ts)', () => {
  let run: Spawned;

  it('serves both health endpoints and the demo on an empty data directory and stops on SIGTERM', async () => {
    run = await startAll({
      DATA_DIR: dataDir,
      AUTH_PORT: '0',
      API_PORT: '0',
      ADMIN_PORT: '0',
      WEB_PORT: '0',
    });
    const line = await waitFor(
      () =>
        run
          .output()
          .split('\n')
          .find((l) => l.includes('Portcullis is up')),
      // About 13 s on a quiet machine (7 of them creating the embedded database); CI runs
      // this beside another test file on two cores.
      60_000,
    );
    const { auth, api, web } = JSON.parse(line) as { auth: string; api: string; web: string };
    // The demo's files (apps/web/public, and its page built into apps/web/dist/page) are
    // found from the compiled bundle too.
    const page = await fetch(web);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<script[^>]+app\.js/);
    expect((await fetch(`${web}/app.js`)).status).toBe(200);
    for (const base of [auth, api]) {
      for (const probe of ['/healthz', '/readyz']) {
        const res = await fetch(base + probe);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/application\/json/);
      }
    }
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(run.output()).toContain('"msg":"stopped"');
  }, 90_000);

  it('refuses to start with an invalid variable and names it', async () => {
    const bad = await startAll({ DATA_DIR: dataDir, AUTH_PORT: 'not-a-port' });
    expect(await bad.exited).toBe(78);
    expect(bad.output()).toMatch(/AUTH_PORT/);
  }, 30_000);

  it('refuses the demo seed and an http issuer in production', async () => {
    const bad = await startAll({ DATA_DIR: dataDir, NODE_ENV: 'production', SEED_DEMO: 'true' });
    expect(await bad.exited).toBe(78);
    expect(bad.output()).toMatch(/ISSUER: must be https/);
    expect(bad.output()).toMatch(/SEED_DEMO/);
    expect(bad.output()).toMatch(/ADMIN_TOKEN/);
  }, 30_000);
});

import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The import rules of .dependency-cruiser.cjs (docs/architecture.md "The rule"): no cycle
 * anywhere, type-only imports included, and the auth server's rooms import downward only.
 */
const root = path.resolve(import.meta.dirname, '../..');
const depcruise = path.join(root, 'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

/** The rules' verdict on `targets`, cruised from `cwd` (paths in the rules are relative to it). */
async function cruise(cwd: string, targets: string[]): Promise<Violation[]> {
  const args = [depcruise, '--config', path.join(root, '.dependency-cruiser.cjs')];
  args.push('--output-type', 'json', ...targets);
  // Exit code = number of violations; the JSON report is on stdout either way.
  const { stdout, stderr } = await promisify(execFile)(process.execPath, args, {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((e: { stdout?: string; stderr?: string }) => ({
    stdout: e.stdout ?? '',
    stderr: e.stderr ?? '',
  }));
  if (!stdout) throw new Error(`dependency-cruiser printed no report: ${stderr}`);
  return (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const described = (v: Violation) => `${v.rule.name}: ${v.from} -> ${v.to}`;

describe('import rules', () => {
  it('hold on the whole repository', async () => {
    const violations = await cruise(root, ['apps', 'packages', 'infra', 'bench']);
    expect(violations.map(described)).toEqual([]);
  }, 60_000);

  it('refuse an upward import and a cycle of types (a tree that breaks them)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'import-rules-'));
    try {
      cpSync(path.join(root, 'tsconfig.base.json'), path.join(dir, 'tsconfig.base.json'));
      const write = (file: string, text: string) => {
        mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        writeFileSync(path.join(dir, file), text);
      };
      const src = 'apps/auth-server/src';
      // The core reaching up into identity's pages, identity into the composition root.
      write(
        `${src}/oauth/device.ts`,
        "import { page } from '../identity/views.js';\nexport const x = page;\n",
      );
      write(
        `${src}/identity/views.ts`,
        "import type { Parts } from '../app.js';\nexport const page = (p?: Parts) => p;\n",
      );
      write(`${src}/app.ts`, 'export interface Parts { a: number }\n');
      // Two kernel files that need each other's types only.
      write(`${src}/kernel/a.ts`, "import type { B } from './b.js';\nexport type A = { b?: B };\n");
      write(`${src}/kernel/b.ts`, "import type { A } from './a.js';\nexport type B = { a?: A };\n");

      const found = (await cruise(dir, ['apps'])).map(described).sort();
      expect(found).toEqual([
        `auth-server-identity-imports-upward: ${src}/identity/views.ts -> ${src}/app.ts`,
        `auth-server-oauth-imports-upward: ${src}/oauth/device.ts -> ${src}/identity/views.ts`,
        // A cycle is reported once, from its first file.
        `no-circular: ${src}/kernel/a.ts -> ${src}/kernel/b.ts`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

/**
 * `pnpm bench`: prints one table of figures and ratios measured in the same run and
 * writes them to bench/results/<time>.json. Figures, never assertions: a slow run does
 * not fail anything. Traffic goes only to 127.0.0.1, in bounded runs.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { root } from './lib.js';
import { sections, type Row } from './sections.js';

const only = process.argv.slice(2);
const rows: Row[] = [];
for (const [name, section] of Object.entries(sections)) {
  if (only.length && !only.includes(name)) continue;
  console.error(`[bench] ${name}…`);
  try {
    rows.push(...(await section()));
  } catch (error) {
    rows.push({ section: name, metric: 'error', value: String((error as Error).message) });
  }
}

const width = Math.max(...rows.map((r) => `${r.section} ${r.metric}`.length));
console.log(`${'figure'.padEnd(width)}  value         goal`);
for (const r of rows) {
  const value = typeof r.value === 'number' ? r.value.toLocaleString('en-US') : r.value;
  console.log(
    `${`${r.section} ${r.metric}`.padEnd(width)}  ${String(value).padEnd(12)}  ${r.goal ?? ''}`,
  );
}

const dir = path.join(root, 'bench/results');
mkdirSync(dir, { recursive: true });
const file = path.join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(
  file,
  JSON.stringify({ at: new Date().toISOString(), node: process.version, rows }, null, 2),
);
console.error(`[bench] written ${path.relative(root, file)}`);

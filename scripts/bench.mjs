#!/usr/bin/env node
// Runs every benchmark in scripts/bench/ in name order, each in its own
// process, and prints what each measured (ratios side by side in one run).
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const dir = fileURLToPath(new URL('./bench/', import.meta.url));
const only = process.argv.slice(2);
let failed = 0;
for (const name of readdirSync(dir)
  .filter((n) => n.endsWith('.mjs'))
  .sort()) {
  if (only.length && !only.some((o) => name.includes(o))) continue;
  console.log(`\n=== ${name} ===`);
  const r = spawnSync(process.execPath, ['--expose-gc', join(dir, name)], { stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.log(`!!! ${name} exited ${r.status}`);
  }
}
process.exitCode = failed ? 1 : 0;

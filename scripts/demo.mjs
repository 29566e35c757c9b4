#!/usr/bin/env node
// The seed's scenario with the real CLI on a copy of the example board:
// list, start, done, and the unblocked tasks appear.
import { cpSync, mkdtempSync, rmSync, realpathSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../packages/cli/bin/tasks.js', import.meta.url));
const example = fileURLToPath(new URL('../.tasks.example/', import.meta.url));
const root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-demo-')));
cpSync(example, join(root, '.tasks'), { recursive: true });

function tasks(...args) {
  console.log(`\n$ tasks ${args.join(' ')}`);
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, TASKS_OWNER: 'agent-1' } });
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  if (r.status !== 0) throw new Error(`tasks ${args.join(' ')} exited ${r.status}`);
  return r.stdout;
}

try {
  tasks('list');
  tasks('start', '1', '--active-form', 'parsing the sources');
  tasks('list');
  const out = tasks('done', '1');
  if (!out.includes('unblocked #2') || !out.includes('unblocked #3')) throw new Error('completing #1 did not unblock #2 and #3');
  tasks('ready');
} finally {
  rmSync(root, { recursive: true, force: true });
}

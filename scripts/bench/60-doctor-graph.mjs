#!/usr/bin/env node
// tasks doctor and tasks graph on a 1,000-task board with a realistic DAG,
// measured side by side with tasks list on the same board (median of 5 runs
// of the built bin each). Targets: doctor and graph each under 1.5 s, and
// within 4x of tasks list.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../packages/cli/bin/tasks.js', import.meta.url));
const N = 1000;
const root = mkdtempSync(join(tmpdir(), 'dotasks-bench-doctor-'));
const board = join(root, '.tasks');
mkdirSync(board);

// A seeded pseudo-random DAG: each task waits for up to 3 earlier ones.
let seed = 42;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const tasks = Array.from({ length: N }, (_, i) => ({ id: i + 1, blockedBy: [], blocks: [], status: i < N / 3 ? 'completed' : 'pending' }));
for (const t of tasks) {
  if (t.id === 1) continue;
  const k = Math.floor(rand() * 4);
  for (let j = 0; j < k; j++) {
    const b = 1 + Math.floor(rand() * (t.id - 1));
    if (!tasks[b - 1].blocks.includes(t.id)) {
      tasks[b - 1].blocks.push(t.id);
      if (tasks[b - 1].status !== 'completed') t.blockedBy.push(b);
    }
  }
}
for (const t of tasks) {
  const file = {
    id: t.id,
    subject: `Task ${t.id}`,
    description: 'some words about the task',
    status: t.status,
    owner: '',
    blockedBy: t.blockedBy.sort((a, b) => a - b),
    blocks: t.blocks.sort((a, b) => a - b),
  };
  writeFileSync(join(board, `task_${t.id}.json`), JSON.stringify(file, null, 2) + '\n');
}
writeFileSync(join(board, '.highwatermark'), `${N}\n`);

function median(args) {
  const times = [];
  for (let i = 0; i < 5; i++) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [BIN, ...args], { cwd: root, env: { ...process.env, TASKS_DIR: board }, encoding: 'utf8' });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (r.status !== 0) throw new Error(`tasks ${args.join(' ')} exited ${r.status}: ${r.stderr}${r.stdout.slice(-500)}`);
  }
  return times.sort((a, b) => a - b)[2];
}

try {
  const list = median(['list']);
  const doctor = median(['doctor']);
  const graphText = median(['graph']);
  const graphMermaid = median(['graph', '-f', 'mermaid']);
  let pass = true;
  const row = (name, ms) => {
    const ok = ms < 1500 && ms / list <= 4;
    pass &&= ok;
    console.log(
      `${name.padEnd(22)} ${ms.toFixed(0).padStart(6)} ms  ${(ms / list).toFixed(2)}x list  ${ok ? 'PASS' : 'MISS'} (target < 1500 ms and <= 4x list)`,
    );
  };
  console.log(`board: ${N} tasks, ${tasks.reduce((n, t) => n + t.blocks.length, 0)} edges`);
  console.log(`${'tasks list'.padEnd(22)} ${list.toFixed(0).padStart(6)} ms  (reference)`);
  row('tasks doctor', doctor);
  row('tasks graph', graphText);
  row('tasks graph -f mermaid', graphMermaid);
  process.exitCode = pass ? 0 : 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}

// `tasks list` as a whole process on boards of 100, 1,000 and 10,000 tasks,
// against `node -e 0` measured in the same run, interleaved.
// Targets: <= 3x at 1,000 tasks, <= 6x at 10,000.
import { rmSync } from 'node:fs';
import { TASKS_BIN, makeBoard, median, timeProcess, verdict } from '../lib/bench-util.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const sizes = [100, 1000, 10000];
const boards = sizes.map((n) => ({ n, ...makeBoard(n) }));
const env = { ...process.env, NO_COLOR: '1' };
// warm the file cache
for (const b of boards) timeProcess([TASKS_BIN, 'list', '--dir', b.dir], { env });

const baseline = [];
const times = new Map(sizes.map((n) => [n, []]));
for (let i = 0; i < RUNS; i++) {
  baseline.push(timeProcess(['-e', '0']));
  for (const b of boards) times.get(b.n).push(timeProcess([TASKS_BIN, 'list', '--dir', b.dir], { env }));
}
const base = median(baseline);
console.log(`node -e 0: median ${base.toFixed(1)} ms over ${RUNS} runs`);
const targets = { 100: undefined, 1000: 3, 10000: 6 };
let failed = false;
for (const n of sizes) {
  const m = median(times.get(n));
  const ratio = m / base;
  const target = targets[n];
  const ok = target === undefined || ratio <= target;
  if (!ok) failed = true;
  console.log(`tasks list, ${String(n).padStart(6)} tasks: median ${m.toFixed(1)} ms = ${ratio.toFixed(2)}x node -e 0${target ? ` (target <= ${target}x: ${verdict(ok)})` : ''}`);
}
for (const b of boards) rmSync(b.root, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;

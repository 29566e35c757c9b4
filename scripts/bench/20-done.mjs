// `tasks done` of a task with 10 dependents on a 10,000-task board against
// the same on a 100-task board, interleaved. Target: <= 1.3x (cost follows
// the task's edges, not the board's size).
import { rmSync } from 'node:fs';
import { TASKS_BIN, makeBoard, median, timeProcess, verdict } from '../lib/bench-util.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
// Hubs every 11 ids from 30 on (away from the sparse edges' ends), one per run.
const hubs = Array.from({ length: RUNS + 1 }, (_, i) => 30 + i * 11 + (i % 2));
const small = makeBoard(Math.max(100, hubs.at(-1) + 12), { hubs });
const large = makeBoard(10000, { hubs });
const env = { ...process.env, NO_COLOR: '1', TASKS_OWNER: 'bench' };
const t = { small: [], large: [] };
timeProcess([TASKS_BIN, 'done', String(hubs[0]), '--dir', small.dir], { env });
timeProcess([TASKS_BIN, 'done', String(hubs[0]), '--dir', large.dir], { env });
for (let i = 1; i <= RUNS; i++) {
  const id = String(hubs[i]);
  if (i % 2) {
    t.small.push(timeProcess([TASKS_BIN, 'done', id, '--dir', small.dir], { env }));
    t.large.push(timeProcess([TASKS_BIN, 'done', id, '--dir', large.dir], { env }));
  } else {
    t.large.push(timeProcess([TASKS_BIN, 'done', id, '--dir', large.dir], { env }));
    t.small.push(timeProcess([TASKS_BIN, 'done', id, '--dir', small.dir], { env }));
  }
}
const ms = median(t.small);
const ml = median(t.large);
const ratio = ml / ms;
console.log(`tasks done (10 dependents), ${Math.max(100, hubs.at(-1) + 12)}-task board: median ${ms.toFixed(1)} ms`);
console.log(`tasks done (10 dependents), 10,000-task board: median ${ml.toFixed(1)} ms`);
console.log(`ratio 10,000 / small: ${ratio.toFixed(2)}x (target <= 1.3x: ${verdict(ratio <= 1.3)})`);
rmSync(small.root, { recursive: true, force: true });
rmSync(large.root, { recursive: true, force: true });
process.exitCode = ratio <= 1.3 ? 0 : 1;

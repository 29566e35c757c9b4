// The read paths as whole processes, side by side in one run, interleaved:
// `node -e 0`; `tasks list` on boards of 100, 1,000 and 10,000 tasks;
// `tasks ready` on the 10,000; `tasks claim --next` on a board of 10,000
// tasks of which 9,990 are completed (released again between runs, outside
// the timing). Every board has parents (bench-util.mjs, addParents): an epic
// every 100 tasks with four stories and their tasks, so a listing shows the
// progress of 2 parents in 21 and ranks children with their epic's priority;
// the claim board's open tasks hold an urgent epic that claim --next passes
// over for its children.
// Targets: list@1,000 <= 1.5x node -e 0, list@10,000 <= 3x node -e 0,
// claim --next on the 10,000/9,990-completed board <= 1.5x list@100.
//
// Every row is measured with its board index (.runtime/board-index.v3)
// already written by a first, untimed run. A claim trusts the index's
// completed tasks for FINAL_TRUST_MS after an exact pass and then makes one
// (a stat of every file): the claim row shows that run in its max, and the
// last rows time the exact pass and a claim without any index on their own.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { TaskStore, BOARD_INDEX_FILE } from '../../packages/core/dist/internal.js';
import { TASKS_BIN, makeBoard, makeHistoryBoard, median, percentile, timeProcess, verdict } from '../lib/bench-util.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const sizes = [100, 1000, 10000];
const boards = sizes.map((n) => ({ n, ...makeBoard(n, { parents: true }) }));
const big = boards.at(-1);
const history = makeHistoryBoard(10000, 10, { parents: true });
const historyStore = new TaskStore(history.dir);
const env = { ...process.env, NO_COLOR: '1', TASKS_OWNER: 'bench' };

/** One `tasks claim --next`, timed; the task is released again afterwards (not timed). */
function timeClaim() {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [TASKS_BIN, 'claim', '--next', '--json', '--dir', history.dir], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) throw new Error(`claim --next exited ${r.status}: ${r.stderr}`);
  return { ms, id: JSON.parse(r.stdout).task.id };
}

async function claimAndRelease() {
  const { ms, id } = timeClaim();
  await historyStore.releaseTask(id, { force: true });
  return ms;
}

// Other work on the machine moves every row (on 2 cores, a busy neighbour doubles them): say how busy it was.
const loadAtStart = loadavg()[0];
// First runs write each board's index.
for (const b of boards) timeProcess([TASKS_BIN, 'list', '--dir', b.dir], { env, allowFail: true });
await claimAndRelease();

const rows = { base: [], ready: [], claim: [], ...Object.fromEntries(sizes.map((n) => [n, []])) };
for (let i = 0; i < RUNS; i++) {
  rows.base.push(timeProcess(['-e', '0']));
  for (const b of boards) rows[b.n].push(timeProcess([TASKS_BIN, 'list', '--dir', b.dir], { env }));
  rows.ready.push(timeProcess([TASKS_BIN, 'ready', '--dir', big.dir], { env }));
  rows.claim.push(await claimAndRelease());
}

// For information: the exact pass a claim makes every FINAL_TRUST_MS (the
// same work as `tasks list` without rendering) and a claim with no index.
const exact = [];
const cold = [];
for (let i = 0; i < Math.min(RUNS, 5); i++) {
  const t0 = performance.now();
  historyStore.loadBoard();
  exact.push(performance.now() - t0);
}
for (let i = 0; i < Math.min(RUNS, 3); i++) {
  rmSync(join(history.dir, '.runtime', BOARD_INDEX_FILE), { force: true });
  cold.push(await claimAndRelease());
}

const base = median(rows.base);
const list100 = median(rows[100]);
const loadBefore = loadAtStart;
let failed = false;
const line = (label, values, against, againstLabel, target) => {
  const m = median(values);
  const ratio = m / against;
  const ok = target === undefined || ratio <= target;
  if (!ok) failed = true;
  const spread = `p90 ${percentile(values, 90).toFixed(0)}, max ${Math.max(...values).toFixed(0)}`;
  console.log(
    `${label.padEnd(34)} median ${m.toFixed(1).padStart(6)} ms (${spread}) = ${ratio.toFixed(2)}x ${againstLabel}${target ? ` (target <= ${target}x: ${verdict(ok)})` : ''}`,
  );
};
console.log(
  `node -e 0: median ${base.toFixed(1)} ms over ${RUNS} runs (load average ${loadBefore.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end)`,
);
line('tasks list, 100 tasks', rows[100], base, 'node -e 0');
line('tasks list, 1,000 tasks', rows[1000], base, 'node -e 0', 1.5);
line('tasks list, 10,000 tasks', rows[10000], base, 'node -e 0', 3);
line('tasks ready, 10,000 tasks', rows.ready, base, 'node -e 0');
line('claim --next, 10,000 (9,990 done)', rows.claim, list100, 'list@100', 1.5);
console.log(`  (= ${(median(rows.claim) / base).toFixed(2)}x node -e 0)`);
console.log(
  `for information: the exact pass on that board (in process) median ${median(exact).toFixed(1)} ms; claim --next with no index ${median(cold).toFixed(1)} ms`,
);
for (const b of [...boards, history]) rmSync(b.root, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;

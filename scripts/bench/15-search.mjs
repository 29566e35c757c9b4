// `tasks search` beside `tasks list` on one board of 10,000 tasks that has
// the planning fields (a priority on a quarter, labels on a third, a note on
// every tenth), interleaved in one run, each with its board index written by
// a first, untimed run. Three searches: a word in many subjects, a label, and
// a word found only in notes (the last field looked at, so every task's
// subject, labels and description are looked at first).
// Target: search <= 1.2x list on the same board (it reads the board as list
// does, then a substring test per field: it should cost about what listing costs).
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { TASKS_BIN, makeBoard, median, percentile, timeProcess, verdict } from '../lib/bench-util.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const board = makeBoard(10000, { planning: true });
const env = { ...process.env, NO_COLOR: '1', TASKS_OWNER: 'bench' };
const loadAtStart = loadavg()[0];

const commands = {
  base: ['-e', '0'],
  list: [TASKS_BIN, 'list', '--dir', board.dir],
  'search "number 99"': [TASKS_BIN, 'search', 'number 99', '--dir', board.dir],
  'search perf (a label)': [TASKS_BIN, 'search', 'perf', '--dir', board.dir],
  'search "received 4" (notes)': [TASKS_BIN, 'search', 'received 4', '--dir', board.dir],
  'list --grep perf': [TASKS_BIN, 'list', '--grep', 'perf', '--dir', board.dir],
};
timeProcess(commands.list, { env }); // writes the index
const rows = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
for (let i = 0; i < RUNS; i++) for (const [k, args] of Object.entries(commands)) rows[k].push(timeProcess(args, { env }));

const base = median(rows.base);
const list = median(rows.list);
let failed = false;
console.log(
  `node -e 0: median ${base.toFixed(1)} ms over ${RUNS} runs (load average ${loadAtStart.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end)`,
);
for (const [k, values] of Object.entries(rows)) {
  if (k === 'base') continue;
  const m = median(values);
  const target = k === 'list' ? undefined : 1.2;
  const ok = target === undefined || m / list <= target;
  if (!ok) failed = true;
  console.log(
    `${`tasks ${k}, 10,000`.padEnd(40)} median ${m.toFixed(1).padStart(6)} ms (p90 ${percentile(values, 90).toFixed(0)}, max ${Math.max(...values).toFixed(0)}) = ${(m / base).toFixed(2)}x node -e 0${
      k === 'list' ? '' : `, ${(m / list).toFixed(2)}x list (target <= ${target}x: ${verdict(ok)})`
    }`,
  );
}
rmSync(board.root, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;

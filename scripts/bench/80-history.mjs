// The everyday commands on a board's history: two boards with the same open
// work (100 open tasks, chains and fan-outs among them) and a history of
// 900 and of 99,900 completed tasks, side by side in one run, interleaved.
// What a command costs beyond the open work is what it pays for the history
// (tasks prime and one call of the agents' todo tool included);
// the target (issue "Scale") is each command on the 100k board within 2x its
// time on the 1k board. Also the floor: a bare Node script that reads and
// parses every file of the 100k board. Every row runs with its board index
// already written by a first, untimed run.
//
// BENCH_HISTORY=N sets the large board's size (default 100,000; building it
// writes N files and takes a while). BENCH_RUNS (default 5 here) the runs.
// Last, `tasks watch`: its start to ready, and its CPU while idle with a
// periodic pass every second (BENCH_IDLE_MS, default 10,000, of it).
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { TaskStore } from '../../packages/core/dist/internal.js';
import { TASKS_BIN, makeHistoryBoard, median, timeProcess, verdict } from '../lib/bench-util.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 10_000);
const TICK_MS = 1000 / Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);
const LARGE = Number(process.env.BENCH_HISTORY ?? 100_000);
const OPEN = 100;
const env = { ...process.env, NO_COLOR: '1', TASKS_OWNER: 'bench' };
const loadAtStart = loadavg()[0];
const started = performance.now();
const boards = [1000, LARGE].map((n) => ({ n, ...makeHistoryBoard(n, OPEN, { parents: true }) }));
const built = performance.now() - started;

const FLOOR = `const fs=require('fs'),p=require('path');const d=process.argv[1];for(const n of fs.readdirSync(d))if(n.startsWith('task_'))JSON.parse(fs.readFileSync(p.join(d,n),'utf8'))`;
const run = (b, args) => timeProcess([TASKS_BIN, ...args, '--dir', b.dir], { env });
const AGENT = new URL('../../packages/agent/dist/index.js', import.meta.url).href;
const TODO_GET = `import(${JSON.stringify(AGENT)}).then(async (m) => { const r = await m.createTodoTool({ dir: process.argv[1] }).execute({ action: 'get', task_id: Number(process.argv[2]) }); if (!r.ok) process.exit(1); })`;

/** An open task to finish in each run: the highest open ids, one a run (they block nothing). */
const toFinish = (b) => {
  const store = new TaskStore(b.dir);
  return store
    .loadBoard()
    .tasks.filter((t) => t.status === 'pending' && t.blocks.length === 0 && t.parent === undefined)
    .map((t) => t.id)
    .slice(-RUNS - 1);
};
for (const b of boards) {
  run(b, ['list']);
  b.finish = toFinish(b);
  b.show = b.finish[0];
}

const commands = {
  list: (b) => run(b, ['list']),
  ready: (b) => run(b, ['ready']),
  'search WORD': (b) => run(b, ['search', 'zebra']),
  'claim --next': (b) => {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, [TASKS_BIN, 'claim', '--next', '--json', '--dir', b.dir], { env, encoding: 'utf8' });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`claim --next exited ${r.status}: ${r.stderr}`);
    // Given back outside the timing, so every run claims from the same board.
    spawnSync(process.execPath, [TASKS_BIN, 'release', String(JSON.parse(r.stdout).task.id), '--dir', b.dir], { env });
    return ms;
  },
  done: (b) => run(b, ['done', String(b.finish.pop()), '--force']),
  create: (b) => run(b, ['create', 'A task made by the bench']),
  show: (b) => run(b, ['show', String(b.show)]),
  prime: (b) => run(b, ['prime']),
  // The agents' tool, one call in a process of its own (as a client that starts `tasks mcp` per session pays it once).
  'todo get': (b) => timeProcess(['-e', TODO_GET, b.dir, String(b.show)], { env }),
};
const rows = Object.fromEntries(Object.keys(commands).map((k) => [k, { small: [], large: [] }]));
const floor = [];
for (let i = 0; i < RUNS; i++) {
  for (const [name, time] of Object.entries(commands)) {
    rows[name].small.push(time(boards[0]));
    rows[name].large.push(time(boards[1]));
  }
  floor.push(timeProcess(['-e', FLOOR, boards[1].dir]));
}

console.log(
  `boards of 1,000 and ${LARGE.toLocaleString('en')} tasks, ${OPEN} open in each (built in ${(built / 1000).toFixed(1)} s); medians of ${RUNS} runs; load average ${loadAtStart.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end`,
);
let failed = false;
for (const [name, { small, large }] of Object.entries(rows)) {
  const ratio = median(large) / median(small);
  const ok = ratio <= 2;
  if (!ok) failed = true;
  console.log(
    `${name.padEnd(14)} 1k ${median(small).toFixed(1).padStart(7)} ms   ${LARGE / 1000}k ${median(large).toFixed(1).padStart(8)} ms   = ${ratio.toFixed(2)}x (target <= 2x: ${verdict(ok)})`,
  );
}
console.log(`read and parse every file of the ${LARGE / 1000}k board (node, no dotasks): ${median(floor).toFixed(1)} ms`);

/** `tasks watch` from its start to "watching" (its first reconcile done), then stopped. */
function watchReady(b) {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(process.execPath, [TASKS_BIN, 'watch', '--dir', b.dir], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      if (!err.includes('watching')) return;
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      child.kill('SIGTERM');
      child.once('close', () => resolve(ms));
    });
    child.once('close', (code) => (err.includes('watching') ? undefined : reject(new Error(`tasks watch exited ${code}: ${err}`))));
  });
}
const watches = { small: [], large: [] };
for (let i = 0; i < Math.min(RUNS, 3); i++) {
  watches.small.push(await watchReady(boards[0]));
  watches.large.push(await watchReady(boards[1]));
}
const watchOk = median(watches.large) <= 2000;
if (!watchOk) failed = true;
console.log(
  `tasks watch start to ready: 1k ${median(watches.small).toFixed(1)} ms, ${LARGE / 1000}k ${median(watches.large).toFixed(1)} ms (target at ${LARGE / 1000}k <= 2000 ms: ${verdict(watchOk)})`,
);

/** User and system CPU of a process so far, ms. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime, stime (fields 14 and 15 of the line)
}

/**
 * `tasks watch` idle: its CPU over IDLE_MS once ready, with a periodic pass every second (the default is every
 * 120 s, so the window holds many); the passes that found nothing moved are counted through TASKS_DEBUG, the full
 * reconciles by their notice, and the start's reconcile time is the watcher's own.
 */
function watchIdle(b) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TASKS_BIN, 'watch', '--reconcile-interval', '1', '--dir', b.dir], {
      env: { ...env, TASKS_DEBUG: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    let started = false;
    const count = (re) => err.match(re)?.length ?? 0;
    child.stderr.on('data', (d) => {
      err += d;
      if (started || !err.includes('watching')) return;
      started = true;
      // The first pass may still see the start's own writes: the window opens after it.
      setTimeout(() => {
        const [cpu0, idle0, full0] = [cpuMs(child.pid), count(/nothing moved/g), count(/reconciled/g)];
        setTimeout(() => {
          const r = { cpu: cpuMs(child.pid) - cpu0, idle: count(/nothing moved/g) - idle0, full: count(/reconciled/g) - full0 };
          r.start = Number(/reconciled \d+ task files in (\d+) ms/.exec(err)?.[1]);
          child.kill('SIGTERM');
          child.once('close', () => resolve(r));
        }, IDLE_MS);
      }, 1500);
    });
    child.once('close', (code) => (started ? undefined : reject(new Error(`tasks watch exited ${code}: ${err}`))));
  });
}
const idle = [await watchIdle(boards[0]), await watchIdle(boards[1])];
const perPass = (r) => r.cpu / Math.max(1, r.idle + r.full);
const idleOk = idle[1].full === 0;
if (!idleOk) failed = true;
console.log(
  `tasks watch idle, a pass every 1 s for ${IDLE_MS / 1000} s: 1k ${idle[0].cpu.toFixed(0)} ms of CPU (${idle[0].idle} passes found nothing moved, ${idle[0].full} full reconciles), ` +
    `${LARGE / 1000}k ${idle[1].cpu.toFixed(0)} ms (${idle[1].idle} and ${idle[1].full}); ${perPass(idle[1]).toFixed(1)} ms a pass at ${LARGE / 1000}k against ${idle[1].start} ms for its start's full reconcile (target: no full reconcile while idle: ${verdict(idleOk)})`,
);
for (const b of boards) rmSync(b.root, { recursive: true, force: true });
process.exitCode = failed ? 1 : 0;

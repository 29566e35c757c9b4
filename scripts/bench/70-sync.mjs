// Several machines through git (tasks sync): clones of one bare remote on
// this machine, each a separate process, side by side in one run.
// - cross-machine claims per second with 2, 4 and 8 clones, each clone one
//   process doing claim --sync, complete, sync until the board is done;
// - sync latency on one clone: nothing to do, and one change going out.
// Then what the figures say about 50 machines on a hosted remote.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskStore, syncBoard } from '../../packages/core/dist/index.js';
import { median, percentile } from '../lib/bench-util.mjs';

const TASKS_PER_CLONE = Number(process.env.BENCH_SYNC_TASKS ?? 12);
const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const CORE = new URL('../../packages/core/dist/index.js', import.meta.url).href;

function setup(k) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-bench-sync-')));
  const bare = join(root, 'remote.git');
  git(root, 'init', '-q', '--bare', '-b', 'main', bare);
  const clones = [];
  for (let i = 1; i <= k; i++) {
    const dir = join(root, `m${i}`);
    git(root, 'clone', '-q', bare, dir);
    git(dir, 'config', 'user.name', `m${i}`);
    git(dir, 'config', 'user.email', `m${i}@bench.invalid`);
    clones.push(TaskStore.init(join(dir, '.tasks')));
  }
  return { root, clones };
}

// One machine's loop, as its own process: claim --sync, complete, sync, until nothing is ready.
const LOOP = `
const { TaskStore, claimWithSync, syncBoard, ClaimError } = await import(${JSON.stringify(CORE)});
const store = new TaskStore(process.argv[1]);
const owner = process.argv[2];
const latencies = [];
let done = 0;
for (;;) {
  const t0 = performance.now();
  try {
    const claim = await claimWithSync(store, undefined, { owner });
    latencies.push(performance.now() - t0);
    await store.completeTask(claim.task.id, { actor: owner });
    await syncBoard(store);
    done++;
  } catch (error) {
    if (error instanceof ClaimError && error.reason === 'nothing_ready') break;
    throw error;
  }
}
process.stdout.write(JSON.stringify({ done, latencies }));
`;

function runClone(store, owner) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', LOOP, store.dir, owner], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`${owner} exited ${code}`))));
  });
}

const rows = [];
for (const k of [2, 4, 8]) {
  const { root, clones } = setup(k);
  const n = TASKS_PER_CLONE * k;
  for (let i = 1; i <= n; i++) await clones[0].createTask({ subject: `task ${i}` });
  for (const c of clones) await syncBoard(c);
  const t0 = performance.now();
  const results = await Promise.all(clones.map((c, i) => runClone(c, `m${i + 1}`)));
  const seconds = (performance.now() - t0) / 1000;
  const done = results.reduce((s, r) => s + r.done, 0);
  const latencies = results.flatMap((r) => r.latencies);
  for (const c of clones) await syncBoard(c);
  const completed = clones[0].loadBoard().tasks.filter((t) => t.status === 'completed').length;
  const pushes = Number(git(join(root, 'remote.git'), 'rev-list', '--count', 'tasks'));
  rows.push({ k, n, done, completed, seconds, perSecond: done / seconds, p50: median(latencies), p99: percentile(latencies, 99), pushes });
  rmSync(root, { recursive: true, force: true });
}

console.log(`cross-machine claims (each clone one process: claim --sync, complete, sync), ${TASKS_PER_CLONE} tasks per clone`);
for (const r of rows)
  console.log(
    `${String(r.k).padStart(2)} clones: ${r.perSecond.toFixed(1).padStart(5)} claims/s  (${r.done} claims of ${r.n} tasks in ${r.seconds.toFixed(1)} s; claim p50 ${r.p50.toFixed(0)} ms, p99 ${r.p99.toFixed(0)} ms; ${r.pushes} commits on the branch; completed ${r.completed}/${r.n}${r.completed === r.n && r.done === r.n ? '' : ' MISS'})`,
  );

// Sync latency on one clone of a board of 200 tasks.
const { root, clones } = setup(2);
for (let i = 1; i <= 200; i++) await clones[0].createTask({ subject: `task ${i}` });
await syncBoard(clones[0]);
await syncBoard(clones[1]);
const idle = [];
const oneOut = [];
for (let i = 0; i < 10; i++) {
  let t0 = performance.now();
  await syncBoard(clones[0]);
  idle.push(performance.now() - t0);
  await clones[0].updateTask(1 + i, { description: `change ${i}` });
  t0 = performance.now();
  await syncBoard(clones[0]);
  oneOut.push(performance.now() - t0);
}
rmSync(root, { recursive: true, force: true });
console.log(
  `sync latency, 200-task board, remote on this machine: nothing to do median ${median(idle).toFixed(0)} ms; one change out median ${median(oneOut).toFixed(0)} ms`,
);

const best = rows.at(-1);
const pushMs = median(oneOut);
console.log(
  [
    'at 50 machines on a hosted remote (a push about 1 s):',
    `  every claim, completion and release is a push to one ref (refs/heads/tasks), and the remote accepts one at a time;`,
    `  here a push round trip is ~${pushMs.toFixed(0)} ms and ${best.k} clones reach ${best.perSecond.toFixed(1)} claims/s, i.e. ~${(1000 / pushMs / 3).toFixed(1)} claims/s per push-second of capacity (3 pushes a task);`,
    '  at ~1 s a push that is ~0.3 tasks/s for the whole fleet whatever the number of machines, and each refused push costs its machine a fetch and a merge, so 50 machines mostly retry;',
    '  past that: batch (a worker claims several tasks in one push, and completions ride on the next claim), or shard the contended ref (one ref per task claim, refs/tasks/claims/N, created by a push that fails if it exists, so claims of different tasks never contend).',
  ].join('\n'),
);

// tasks sync at scale, side by side in one run (docs/decisions.md, "The board branch grows with the change"):
// - a sync with nothing to do on a board of 1,000 and of 100,000 tasks: what it costs, how much of that is
//   the stat of every board file, and what the full merge it no longer makes costs at each size;
// - what 1,000 syncs that each change one task of a 10,000-task board leave in the clone and in the remote
//   (git count-objects -v), beside what the flat tree of format 1 would have added per push.
// Boards are written straight to their files and synced in process (syncBoard), a bare remote on this machine.
// BENCH_SCALE_BIG (default 100000), BENCH_SCALE_SYNCS (default 1000) change the sizes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { TaskStore, syncBoard } from '../../packages/core/dist/index.js';
import { serializeTask } from '../../packages/core/dist/internal.js';
import { lookAtBoard, QUIET_FILE } from '../../packages/core/dist/sync/quiet-sync.js';
import { median } from '../lib/bench-util.mjs';

const SMALL = 1000;
const BIG = Number(process.env.BENCH_SCALE_BIG ?? 100_000);
const CHURN_BOARD = 10_000;
const SYNCS = Number(process.env.BENCH_SCALE_SYNCS ?? 1000);
const RUNS = 9;
const git = (cwd, ...args) => execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 30 }).trim();

function setup(n) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-bench-scale-')));
  const bare = join(root, 'remote.git');
  git(root, 'init', '-q', '--bare', '-b', 'main', bare);
  // git gc --auto in the foreground (after a push, and the remote's after it receives one), so it is
  // counted where it runs and done before the folder is removed.
  git(bare, 'config', 'gc.autoDetach', 'false');
  const dir = join(root, 'm1');
  git(root, 'clone', '-q', bare, dir);
  git(dir, 'config', 'gc.autoDetach', 'false');
  git(dir, 'config', 'user.name', 'm1');
  git(dir, 'config', 'user.email', 'm1@bench.invalid');
  const store = TaskStore.init(join(dir, '.tasks'));
  for (let id = 1; id <= n; id++)
    writeFileSync(
      join(store.dir, `task_${id}.json`),
      // 90% of it history, as a board in its months is (and as the boards were).
      serializeTask({
        id,
        subject: `task ${id}`,
        description: `the work of task ${id}`,
        status: id <= n * 0.9 ? 'completed' : 'pending',
        owner: '',
        blockedBy: [],
        blocks: [],
        extra: {},
      }),
    );
  writeFileSync(join(store.dir, '.highwatermark'), `${n}\n`);
  return { root, bare, dir, store };
}

/** Polls until the file system's clock is past every file just written (a look trusts nothing newer). */
function clockPast(store) {
  const newest = statSync(join(store.dir, '.highwatermark')).ctimeMs;
  const probe = join(store.runtimeDir, 'bench-clock');
  for (;;) {
    writeFileSync(probe, '');
    if (statSync(probe).ctimeMs > newest) return;
  }
}

const ms = async (f) => {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
};

/** A board of `n` tasks synced once, with the look of its last sync recorded. */
async function prepare(n) {
  const b = setup(n);
  const built = performance.now();
  await syncBoard(b.store);
  const firstSync = performance.now() - built;
  clockPast(b.store);
  await syncBoard(b.store); // records the look, if the first could not
  return { ...b, n, firstSync, quiet: [], look: [], beside: [], full: [] };
}

/** Quiet syncs of both boards in turn (a busy machine slows both alike), each followed by a look of its own. */
async function idle(boards) {
  for (let i = 0; i < RUNS; i++)
    for (const b of boards) {
      const quiet = await ms(() => syncBoard(b.store));
      const look = await ms(() => lookAtBoard(b.store));
      b.quiet.push(quiet);
      b.look.push(look);
      b.beside.push(quiet - look);
    }
  for (let i = 0; i < 3; i++)
    for (const b of boards) {
      // Without the record, the sync makes the merge every sync made before: the cost it saves.
      rmSync(join(b.store.runtimeDir, QUIET_FILE), { force: true });
      b.full.push(await ms(() => syncBoard(b.store)));
    }
  for (const b of boards) rmSync(b.root, { recursive: true, force: true });
  return boards.map((b) => ({ n: b.n, firstSync: b.firstSync, quiet: median(b.quiet), look: median(b.look), beside: median(b.beside), full: median(b.full) }));
}

function countObjects(gitDir) {
  const out = Object.fromEntries(
    git(gitDir, 'count-objects', '-v')
      .split('\n')
      .map((l) => l.split(': '))
      .map(([k, v]) => [k, Number(v)]),
  );
  return { loose: out.count, looseKiB: out.size, packed: out['in-pack'], packKiB: out['size-pack'], packs: out.packs };
}

/** The loose size of the flat root tree format 1 pushed with every change (entries as `git ls-tree -r` lists them). */
function flatTreeBytes(bare) {
  const entries = git(bare, 'ls-tree', '-r', 'tasks')
    .split('\n')
    .map((line) => {
      const [meta, path] = line.split('\t');
      const [mode, , sha] = meta.split(' ');
      return { name: path.startsWith('tasks/') ? path.split('/').pop() : path, mode, sha };
    })
    .filter((e) => !e.name.startsWith('.dotasks-board') && !e.name.includes('/'));
  entries.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)));
  const body = Buffer.concat(entries.flatMap((e) => [Buffer.from(`${e.mode} ${e.name}\0`), Buffer.from(e.sha, 'hex')]));
  const object = Buffer.concat([Buffer.from(`tree ${body.length}\0`), body]);
  return { entries: entries.length, raw: object.length, loose: deflateSync(object).length };
}

async function churn() {
  const b = setup(CHURN_BOARD);
  await syncBoard(b.store);
  const before = { clone: countObjects(b.dir), remote: countObjects(b.bare) };
  const head = git(b.bare, 'rev-parse', 'tasks');
  const t0 = performance.now();
  for (let i = 0; i < SYNCS; i++) {
    await b.store.updateTask(1 + ((i * 37) % CHURN_BOARD), { description: `change ${i}` });
    await syncBoard(b.store);
  }
  const seconds = (performance.now() - t0) / 1000;
  const after = { clone: countObjects(b.dir), remote: countObjects(b.bare) };
  const added = git(b.bare, 'rev-list', '--objects', `${head}..tasks`).split('\n').filter(Boolean).length;
  const flat = flatTreeBytes(b.bare);
  let autogc = 'unset';
  try {
    autogc = execFileSync('git', ['config', '--get', 'receive.autogc'], { cwd: b.bare, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // unset: git's default
  }
  rmSync(b.root, { recursive: true, force: true });
  return { seconds, before, after, added, flat, autogc };
}

const [small, big] = await idle([await prepare(SMALL), await prepare(BIG)]);
const misses = [];
const ratio = big.quiet / small.quiet;
const beyondLook = Math.max(1, big.beside) / Math.max(1, small.beside);
console.log(`a sync with nothing to do (median of ${RUNS}, the two boards in turn, in process, remote on this machine):`);
for (const r of [small, big])
  console.log(
    `  ${String(r.n).padStart(7)} tasks: ${r.quiet.toFixed(0).padStart(5)} ms; a look at the board ${r.look.toFixed(0).padStart(4)} ms, the rest ${r.beside.toFixed(0).padStart(4)} ms; the full merge it skips ${r.full.toFixed(0).padStart(6)} ms (first sync ${(r.firstSync / 1000).toFixed(1)} s)`,
  );
console.log(
  `  ${BIG} vs ${SMALL}: ${ratio.toFixed(2)}x the whole sync (the stat grows with the board); ${beyondLook.toFixed(2)}x beside the stat (target <= 1.5x)`,
);
console.log(`  at ${BIG}: the quiet sync is ${(big.full / big.quiet).toFixed(1)}x cheaper than the merge it skips (target >= 3x)`);
if (beyondLook > 1.5) misses.push('a quiet sync beside the stat grows with the board');
if (big.full / big.quiet < 3) misses.push('the quiet sync saves less than 3x at the big board');

const c = await churn();
const perPush = (c.after.remote.loose - c.before.remote.loose) / SYNCS;
const oldLooseKiB = (SYNCS * (c.flat.loose + 400)) / 1024; // + its commit and blob, about 400 bytes
console.log(`${SYNCS} syncs, each changing one task of ${CHURN_BOARD} (${c.seconds.toFixed(0)} s, ${((c.seconds * 1000) / SYNCS).toFixed(0)} ms a sync):`);
for (const side of ['clone', 'remote']) {
  const a = c.after[side];
  console.log(
    `  ${side.padEnd(6)}: ${a.loose} loose objects, ${(a.looseKiB / 1024).toFixed(1)} MiB loose; ${a.packed} packed in ${a.packs} pack(s), ${(a.packKiB / 1024).toFixed(1)} MiB`,
  );
}
console.log(
  `  the pushes added ${c.added} objects (${(c.added / SYNCS).toFixed(1)} a push, ${perPush.toFixed(1)} loose on the remote); format 1's flat root tree of ${c.flat.entries} entries is ${(c.flat.raw / 1024).toFixed(0)} KiB (${(c.flat.loose / 1024).toFixed(0)} KiB loose) a push: ${(oldLooseKiB / 1024).toFixed(0)} MiB loose for these pushes`,
);
console.log(
  `  remote: receive.autogc ${c.autogc} (default true: git gc --auto after each push, which packs past gc.auto = 6700 loose objects); pushes under transfer.unpackLimit (100 objects) arrive loose`,
);
const newLooseMiB = c.after.remote.looseKiB / 1024;
console.log(`  loose on the remote: ${newLooseMiB.toFixed(1)} MiB now vs ~${(oldLooseKiB / 1024).toFixed(0)} MiB with flat trees (target: 10x less)`);
if (c.added / SYNCS > 6) misses.push('a push adds more than 6 objects');
if (newLooseMiB * 10 > oldLooseKiB / 1024) misses.push('the remote grows within 10x of the flat layout');
if (misses.length) {
  console.log(`MISSED: ${misses.join('; ')}`);
  process.exit(1);
}

#!/usr/bin/env node
// Claims under contention: 8 processes empty a board of 2,000 ready tasks
// with the core's claimNext (each process its own owner, completing every
// task it claims: single-in-progress is on, as by default), against 8
// processes doing a plain proper-lockfile read-modify-write loop on one JSON
// file (lock, read, mark the first unclaimed entry, write, unlock), in the
// same run. Reports claims/s, the claim latency p50/p99 and double claims
// (checked from the event log and the final files).
//
// Targets: dotasks ≥ 0.8× the plain loop's claims/s, p99 < 100 ms, 0 double claims.
// The plain loop writes its one file as durably as the board writes its files
// (temp file, fsync, rename, fsync of the folder): a command that exited 0
// survives a power cut in both. The same loop without any fsync, and dotasks
// with TASKS_FSYNC=0, are printed too: the difference is what durability costs.
// dotasks' loop also completes every task it claims (an extra locked write per
// claim, with its own fsyncs) and still has to reach 0.8× the plain loop.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const core = await import(join(ROOT, 'packages/core/dist/internal.js'));
const PROCESSES = 8;
const TASKS = Number(process.env.BENCH_CLAIM_TASKS) || 2000;
const SELF = fileURLToPath(import.meta.url);

const [mode, ...args] = process.argv.slice(2);
if (mode === 'dotasks') await childDotasks(...args);
else if (mode === 'plain') await childPlain(...args);
else await main();

async function waitForGo(go) {
  while (!existsSync(go)) await sleep(1);
}

/** One contender on the board: claimNext, complete, until nothing is ready. */
async function childDotasks(board, k, go) {
  const store = new core.TaskStore(board);
  const owner = `bench-${k}`;
  const claimed = [];
  const latencies = [];
  await waitForGo(go);
  for (;;) {
    const t0 = performance.now();
    let result;
    try {
      result = await store.claimNext({ owner, lease: { pid: process.pid } });
    } catch (error) {
      if (error instanceof core.ClaimError && error.reason === 'nothing_ready') break;
      throw error;
    }
    latencies.push(performance.now() - t0);
    claimed.push(result.task.id);
    await store.completeTask(result.task.id, { actor: owner });
  }
  process.stdout.write(JSON.stringify({ claimed, latencies, end: Date.now() }));
}

/** One contender on the single file: lock, read, claim the first free entry, write, unlock. */
async function childPlain(file, k, go, durable) {
  const lockfile = (await import(join(ROOT, 'node_modules/proper-lockfile/index.js'))).default;
  const owner = `plain-${k}`;
  const claimed = [];
  const latencies = [];
  await waitForGo(go);
  for (;;) {
    const t0 = performance.now();
    const release = await lockfile.lock(file, {
      realpath: false,
      stale: 10_000,
      retries: { retries: 10_000, factor: 1.5, minTimeout: 1, maxTimeout: 40, randomize: true },
      onCompromised: (error) => {
        throw error;
      },
    });
    let id;
    try {
      const board = JSON.parse(readFileSync(file, 'utf8'));
      const entry = board.tasks.find((t) => t.owner === '');
      if (entry) {
        entry.owner = owner;
        entry.status = 'in_progress';
        id = entry.id;
        if (durable === '1')
          core.atomicWriteFile(file, JSON.stringify(board, null, 2) + '\n'); // temp, fsync, rename, fsync the folder
        else writeFileSync(file, JSON.stringify(board, null, 2) + '\n');
      }
    } finally {
      await release();
    }
    if (id === undefined) break;
    latencies.push(performance.now() - t0);
    claimed.push(id);
  }
  process.stdout.write(JSON.stringify({ claimed, latencies, end: Date.now() }));
}

function runChild(args, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SELF, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`child ${args[0]} exited ${code}`))));
  });
}

/** Starts the contenders, waits until they are loaded, then releases them at once. */
async function race(dir, childArgs, extra = [], env = {}) {
  const go = join(dir, `go-${Math.random().toString(36).slice(2)}`);
  const children = Array.from({ length: PROCESSES }, (_, k) => runChild([...childArgs(k), go, ...extra], env));
  await sleep(1500); // let every process load its modules before the start
  const start = Date.now();
  writeFileSync(go, '');
  const results = await Promise.all(children);
  const seconds = (Math.max(...results.map((r) => r.end)) - start) / 1000;
  const claimed = results.flatMap((r) => r.claimed);
  const latencies = results.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))] ?? NaN;
  const perProcess = results.map((r) => r.claimed.length);
  return { seconds, claimed, rate: claimed.length / seconds, p50: pct(50), p99: pct(99), perProcess };
}

function doubles(ids) {
  const seen = new Set();
  let n = 0;
  for (const id of ids) {
    if (seen.has(id)) n++;
    seen.add(id);
  }
  return n;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'dotasks-bench-claims-'));
  try {
    // The boards: 2,000 ready tasks, written as `tasks create` would write them.
    const makeBoard = (name) => {
      const board = join(dir, name, '.tasks');
      core.TaskStore.init(board);
      for (let id = 1; id <= TASKS; id++) {
        const task = { id, subject: `Task ${id}`, description: '', status: 'pending', owner: '', blockedBy: [], blocks: [], extra: core.createRecord() };
        writeFileSync(join(board, core.taskFileName(id)), core.serializeTask(task));
      }
      writeFileSync(join(board, core.HIGHWATERMARK_FILE), `${TASKS}\n`);
      return board;
    };
    const board = makeBoard('durable');
    const boardNoSync = makeBoard('nosync');
    const plainFile = (name) => {
      const file = join(dir, name);
      const tasks = Array.from({ length: TASKS }, (_, i) => ({ id: i + 1, subject: `Task ${i + 1}`, status: 'pending', owner: '' }));
      writeFileSync(file, JSON.stringify({ tasks }, null, 2) + '\n');
      return file;
    };
    const plainDurable = plainFile('board-durable.json');
    const plainFast = plainFile('board-fast.json');

    console.log(`${PROCESSES} processes, ${TASKS} ready tasks, same run`);
    const plainD = await race(dir, (k) => ['plain', plainDurable, String(k)], ['1']);
    const plainF = await race(dir, (k) => ['plain', plainFast, String(k)], ['0']);
    const ours = await race(dir, (k) => ['dotasks', board, String(k)]);
    const oursNoSync = await race(dir, (k) => ['dotasks', boardNoSync, String(k)], [], { TASKS_FSYNC: '0' });

    // Double claims: from the processes' own reports, the event log and the files.
    const store = new core.TaskStore(board);
    const events = store.readEvents();
    const claimEvents = events.filter((e) => e.type === 'claimed');
    const eventDoubles = doubles(claimEvents.map((e) => e.task));
    const notCompleted = store.loadBoard().tasks.filter((t) => t.status !== 'completed').length;
    const oursDoubles = doubles(ours.claimed) + eventDoubles;
    const plainDoubles = doubles(plainD.claimed) + doubles(plainF.claimed);
    const leftovers = JSON.parse(readFileSync(plainDurable, 'utf8')).tasks.filter((t) => t.owner === '').length;

    const row = (name, r) =>
      `${name.padEnd(44)} ${r.rate.toFixed(0).padStart(6)} claims/s  p50 ${r.p50.toFixed(1).padStart(6)} ms  p99 ${r.p99.toFixed(1).padStart(6)} ms  (${r.claimed.length} in ${r.seconds.toFixed(1)} s; per process ${r.perProcess.join('/')})`;
    console.log(row('plain lockfile RMW, one file, durable', plainD));
    console.log(row('plain lockfile RMW, one file, no fsync', plainF));
    console.log(row('dotasks claimNext + done, durable', ours));
    console.log(row('dotasks claimNext + done, TASKS_FSYNC=0', oursNoSync));
    const ratio = ours.rate / plainD.rate;
    const checks = [
      [`claims/s ratio vs the plain loop (both durable): ${ratio.toFixed(2)}×`, 'target ≥ 0.8×', ratio >= 0.8],
      [`p99 claim latency: ${ours.p99.toFixed(1)} ms`, 'target < 100 ms', ours.p99 < 100],
      [
        `double claims: ${oursDoubles} (${claimEvents.length} claimed events for ${TASKS} tasks, ${notCompleted} not completed; plain: ${plainDoubles}, ${leftovers} unclaimed)`,
        'target 0',
        oursDoubles === 0 && claimEvents.length === TASKS && notCompleted === 0 && plainDoubles === 0,
      ],
    ];
    console.log(
      `(for information: ${(ours.rate / plainF.rate).toFixed(2)}× the plain loop without fsync; durability costs dotasks ${(100 * (1 - ours.rate / oursNoSync.rate)).toFixed(0)}% of its claims/s, the plain loop ${(100 * (1 - plainD.rate / plainF.rate)).toFixed(0)}%)`,
    );
    for (const [what, target, ok] of checks) console.log(`${ok ? 'PASS' : 'MISS'}  ${what}  (${target})`);
    if (checks.some(([, , ok]) => !ok)) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

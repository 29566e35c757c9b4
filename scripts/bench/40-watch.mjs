#!/usr/bin/env node
// The watcher: how fast a hand edit that completes a task reaches
// its dependent's file, and how much memory the watcher holds at 1,000 and
// 10,000 tasks. Runs the real `tasks watch` process on temp boards built
// by writing task files directly (as git or a person would).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TaskStore, serializeTask } from '../../packages/core/dist/internal.js';

const BIN = fileURLToPath(new URL('../../packages/cli/bin/tasks.js', import.meta.url));
const EDITS = 200;
const MISS_AFTER_MS = 5_000;

/** A board of `size` tasks; tasks 1..pairs block tasks pairs+1..2*pairs one to one. */
function makeBoard(size, pairs) {
  const root = mkdtempSync(join(tmpdir(), 'dotasks-bench-watch-'));
  const dir = join(root, '.tasks');
  const store = TaskStore.init(dir);
  for (let id = 1; id <= size; id++) {
    const task = { id, subject: `Task ${id}`, description: 'benchmark task', status: 'pending', owner: '', blockedBy: [], blocks: [], extra: {} };
    if (id <= pairs) task.blocks = [id + pairs];
    else if (id <= 2 * pairs) task.blockedBy = [id - pairs];
    writeFileSync(store.taskPath(id), serializeTask(task));
  }
  writeFileSync(join(dir, '.highwatermark'), `${size}\n`);
  return { root, dir, store };
}

function rssMb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function startWatcher(root, args = []) {
  const child = spawn(process.execPath, [BIN, 'watch', '--json', ...args], { cwd: root, env: { ...process.env, TASKS_DIR: join(root, '.tasks') } });
  let stderr = '';
  let events = 0;
  child.stdout.on('data', (d) => (events += String(d).split('\n').filter(Boolean).length));
  child.stderr.on('data', (d) => (stderr += d));
  const started = performance.now();
  const ready = new Promise((resolve, reject) => {
    const check = () => {
      if (stderr.includes('watching')) return resolve(performance.now() - started);
      if (child.exitCode !== null) return reject(new Error(`watcher exited: ${stderr}`));
      setTimeout(check, 10);
    };
    check();
  });
  const stop = () =>
    new Promise((resolve) => {
      child.on('close', resolve);
      child.kill('SIGTERM');
    });
  return { child, ready, stop, stderr: () => stderr, events: () => events };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resolves with the ms from now until task `id`'s blockedBy is empty, or undefined after MISS_AFTER_MS. */
function waitUnblocked(dir, id, started) {
  const file = join(dir, `task_${id}.json`);
  return new Promise((resolve) => {
    let done = false;
    const check = () => {
      if (done) return;
      try {
        if (JSON.parse(readFileSync(file, 'utf8')).blockedBy.length === 0) finish(performance.now() - started);
      } catch {
        // mid-rename: look again
      }
    };
    const finish = (value) => {
      done = true;
      watcher.close();
      clearInterval(poll);
      clearTimeout(timer);
      resolve(value);
    };
    const watcher = watch(dir, (_e, name) => name === `task_${id}.json` && check());
    const poll = setInterval(check, 20);
    const timer = setTimeout(() => finish(undefined), MISS_AFTER_MS);
    check();
  });
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const verdict = (ok) => (ok ? 'PASS' : 'MISS');
let failed = false;

// ---- latency: 200 hand completions on a 1,000-task board ------------------
{
  const { root, dir, store } = makeBoard(1_000, EDITS);
  const w = startWatcher(root);
  await w.ready;
  const latencies = [];
  let misses = 0;
  for (let i = 1; i <= EDITS; i++) {
    const file = store.taskPath(i);
    const text = readFileSync(file, 'utf8').replace('"status": "pending"', '"status": "completed"');
    const how = i % 2 ? 'in-place' : 'rename';
    const started = performance.now();
    if (how === 'in-place') writeFileSync(file, text);
    else {
      writeFileSync(`${file}.swp`, text);
      renameSync(`${file}.swp`, file);
    }
    const ms = await waitUnblocked(dir, i + EDITS, started);
    if (ms === undefined) misses++;
    else latencies.push(ms);
    await sleep(5); // people do not type at machine speed; keeps edits apart
  }
  await w.stop();
  rmSync(root, { recursive: true, force: true });
  latencies.sort((a, b) => a - b);
  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  console.log(`hand completion → dependent updated, ${EDITS} edits on 1,000 tasks (half in place, half rename)`);
  console.log(`  p50 ${p50.toFixed(1)} ms (target ≤ 100 ms) ${verdict(p50 <= 100)}`);
  console.log(`  p99 ${p99.toFixed(1)} ms (target ≤ 500 ms) ${verdict(p99 <= 500)}`);
  console.log(`  max ${latencies.at(-1).toFixed(1)} ms, misses ${misses} (target 0) ${verdict(misses === 0)}`);
  failed ||= p50 > 100 || p99 > 500 || misses > 0;
}

// ---- memory at 1,000 and 10,000 tasks ------------------------------------
// Settled RSS after the start-up reconcile, then a soak: edits and
// completions every 50 ms for 20 s with a full reconcile every 2 s (60x the
// default rate), sampling RSS each second. Flat = the last third of the
// samples peaks no higher than 1.25x the first third's peak.
const SOAK_MS = Number(process.env.BENCH_WATCH_SOAK_MS) || 20_000; // longer soaks: BENCH_WATCH_SOAK_MS=600000
const memory = {};
for (const size of [1_000, 10_000]) {
  const { root, dir, store } = makeBoard(size, 100);
  const w = startWatcher(root, ['--reconcile-interval', '2']);
  const readyMs = await w.ready;
  await sleep(2_000);
  const settled = rssMb(w.child.pid);
  const samples = [];
  const sampler = setInterval(() => samples.push(rssMb(w.child.pid)), 1_000);
  const soakStart = performance.now();
  for (let i = 0; performance.now() - soakStart < SOAK_MS; i++) {
    if (i < 100) {
      const file = store.taskPath(i + 1);
      writeFileSync(file, readFileSync(file, 'utf8').replace('"status": "pending"', '"status": "completed"'));
    } else {
      const file = store.taskPath(300 + (i % (size - 300)));
      const task = JSON.parse(readFileSync(file, 'utf8'));
      task.description = `benchmark task, edit ${i}`;
      writeFileSync(file, JSON.stringify(task, null, 2) + '\n');
    }
    await sleep(50);
  }
  clearInterval(sampler);
  await sleep(3_000);
  const end = rssMb(w.child.pid);
  const propagated = [...Array(100).keys()].filter((k) => JSON.parse(readFileSync(join(dir, `task_${k + 101}.json`), 'utf8')).blockedBy.length === 0).length;
  await w.stop();
  rmSync(root, { recursive: true, force: true });
  const third = Math.max(1, Math.floor(samples.length / 3));
  const firstPeak = Math.max(...samples.slice(0, third));
  const lastPeak = Math.max(...samples.slice(-third));
  const flat = lastPeak <= firstPeak * 1.25;
  memory[size] = settled;
  console.log(`watcher on ${size.toLocaleString('en')} tasks: ready in ${readyMs.toFixed(0)} ms; RSS settled ${settled.toFixed(1)} MB`);
  console.log(
    `  ${SOAK_MS / 1000} s soak: RSS peak ${firstPeak.toFixed(1)} MB in the first third, ${lastPeak.toFixed(1)} MB in the last, ${end.toFixed(1)} MB after; flat ${verdict(flat)}; ${propagated}/100 completions propagated ${verdict(propagated === 100)}`,
  );
  failed ||= !flat || propagated !== 100;
}
console.log(`RSS settled, 10,000 / 1,000 tasks: ${(memory[10_000] / memory[1_000]).toFixed(2)}x`);
process.exitCode = failed ? 1 : 0;

#!/usr/bin/env node
// The whole-board commands on a long chain (each task waits for the one
// before, every one related to the next), against the floor: a bare Node
// script that reads and parses every task file. `tasks doctor`,
// `tasks graph --all --json` and `tasks export` each read the whole board;
// target: within 1.5x of the floor, and never a stack overflow.
//
// By default the issue's 300,000 tasks, one run each (about a minute).
// Writing that board takes about 12 s and 1.3 GB of disk (a 4 kB block a
// file), so it is kept under the system's temp folder, named by its size and
// this file's format version, and reused by the next run (delete it to
// rebuild). BENCH_WHOLE=N makes a board of N tasks instead, for a quick run
// (BENCH_WHOLE=30000: seconds); below 100,000 tasks each command is the
// median of BENCH_RUNS (3) runs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BOARD_GITIGNORE, serializeTask } from '../../packages/core/dist/internal.js';
import { TASKS_BIN, median } from '../lib/bench-util.mjs';

const N = Number(process.env.BENCH_WHOLE ?? 300_000);
if (!Number.isSafeInteger(N) || N < 2) throw new Error(`BENCH_WHOLE must be a number of tasks, 2 or more (got ${process.env.BENCH_WHOLE})`);
const RUNS = N >= 100_000 ? 1 : Number(process.env.BENCH_RUNS ?? 3);
const TARGET = 1.5;
const VERSION = 1;

/** The chain board, written once per size (a marker file says it is whole). */
function chainBoard() {
  const root = join(tmpdir(), `dotasks-bench-chain-${N}-v${VERSION}`);
  const dir = join(root, '.tasks');
  if (existsSync(join(root, 'complete'))) return { root, dir, built: false };
  rmSync(root, { recursive: true, force: true });
  mkdirSync(join(dir, '.runtime'), { recursive: true });
  writeFileSync(join(dir, '.gitignore'), BOARD_GITIGNORE);
  for (let id = 1; id <= N; id++) {
    const task = {
      id,
      subject: `Step ${id} of the long chain`,
      description: 'A description of moderate length, as people write them.',
      status: id % 3 === 0 ? 'completed' : 'pending',
      owner: '',
      blockedBy: id > 1 && (id - 1) % 3 !== 0 ? [id - 1] : [],
      blocks: id < N ? [id + 1] : [],
      related: [id - 1, id + 1].filter((r) => r >= 1 && r <= N),
      extra: {},
    };
    writeFileSync(join(dir, `task_${id}.json`), serializeTask(task));
  }
  writeFileSync(join(dir, '.highwatermark'), `${N}\n`);
  writeFileSync(join(root, 'complete'), '');
  return { root, dir, built: true };
}

// The floor: what any whole-board command must do at least (list the folder, read and parse each file).
const FLOOR = `
const { readdirSync, readFileSync } = require('node:fs');
const dir = process.argv[1];
let n = 0;
for (const name of readdirSync(dir)) if (/^task_\\d+\\.json$/.test(name)) { JSON.parse(readFileSync(dir + '/' + name, 'utf8')); n++; }
if (n === 0) process.exit(1);
`;

function time(args, cwd, env) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 1 << 26,
    });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (r.status !== 0) throw new Error(`${args.slice(1).join(' ')} exited ${r.status}: ${r.stderr.slice(-500)}`);
  }
  return median(times);
}

const started = process.hrtime.bigint();
const { root, dir, built } = chainBoard();
const buildMs = Number(process.hrtime.bigint() - started) / 1e6;
const env = { TASKS_DIR: dir };
// One read before measuring, so the floor and the commands all find the files in the page cache, and one
// `tasks list`, so the board index exists (graph and export read through it; its first build reads every file).
time(['-e', FLOOR, dir], root, env);
time([TASKS_BIN, 'list'], root, env);
const floor = time(['-e', FLOOR, dir], root, env);
console.log(
  `board: a chain of ${N.toLocaleString('en')} tasks (${built ? `written in ${(buildMs / 1000).toFixed(1)} s` : `reused from ${root}`}), median of ${RUNS}`,
);
console.log(`${'floor (read + parse)'.padEnd(26)} ${floor.toFixed(0).padStart(7)} ms  (reference)`);
let pass = true;
for (const [name, args] of [
  ['tasks doctor', ['doctor']],
  ['tasks graph --all --json', ['graph', '--all', '--json']],
  ['tasks export', ['export']],
]) {
  const ms = time([TASKS_BIN, ...args], root, env);
  const ok = ms / floor <= TARGET;
  pass &&= ok;
  console.log(`${name.padEnd(26)} ${ms.toFixed(0).padStart(7)} ms  ${(ms / floor).toFixed(2)}x floor  ${ok ? 'PASS' : 'MISS'} (target <= ${TARGET}x)`);
}
process.exitCode = pass ? 0 : 1;

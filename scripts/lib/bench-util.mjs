// Shared helpers for the benchmarks in scripts/bench/.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serializeTask, BOARD_GITIGNORE } from '../../packages/core/dist/internal.js';

export const TASKS_BIN = fileURLToPath(new URL('../../packages/cli/bin/tasks.js', import.meta.url));

/** Milliseconds one whole process takes. */
export function timeProcess(args, options = {}) {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], ...options });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0 && !options.allowFail) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export function percentile(values, p) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/**
 * A temp directory holding a board of `count` tasks written directly in
 * canonical form; with `parents`, a hierarchy as a planned board has one.
 */
export function makeBoard(count, { edges = true, hubs = [], planning = false, parents = false } = {}) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-bench-')));
  const dir = join(root, '.tasks');
  mkdirSync(join(dir, '.runtime'), { recursive: true });
  writeFileSync(join(dir, '.gitignore'), BOARD_GITIGNORE);
  const tasks = [];
  for (let id = 1; id <= count; id++) {
    tasks.push({
      id,
      subject: `Task number ${id} of the benchmark board`,
      description: 'A description of moderate length, as people write them.',
      status: id % 7 === 0 ? 'completed' : id % 11 === 0 ? 'in_progress' : 'pending',
      owner: id % 11 === 0 ? `agent-${id % 4}` : '',
      blockedBy: [],
      blocks: [],
      extra: {},
    });
  }
  if (planning) {
    // The planning fields on a share of the tasks, as a planned board has them: a priority on every
    // fourth, labels on every third, a note (of a worker's length) on every tenth.
    const LABELS = ['parser', 'cli', 'docs', 'bug', 'perf', 'ui'];
    for (const t of tasks) {
      if (t.id % 4 === 0) t.priority = t.id % 5;
      if (t.id % 3 === 0) t.labels = [LABELS[t.id % LABELS.length], LABELS[(t.id >> 2) % LABELS.length]];
      if (t.id % 10 === 0)
        t.notes = [
          {
            at: new Date(Date.UTC(2026, 0, 1, 0, 0, t.id)).toISOString(),
            owner: `agent-${t.id % 4}`,
            text: `worker: the command failed (exit 1); its output ended:\nFAIL test ${t.id}\nExpected 3, received 4`,
          },
        ];
    }
  }
  if (edges) {
    // A sparse DAG: each task may wait for one or two earlier ones.
    for (const t of tasks) {
      if (t.id > 10 && t.id % 3 === 0) link(tasks[t.id - 1 - 5], t);
      if (t.id > 20 && t.id % 5 === 0) link(tasks[t.id - 1 - 17], t);
    }
  }
  if (parents) addParents(tasks, 1);
  // Hubs: pending tasks with 10 pending dependents each, for `done` timing.
  for (const hub of hubs) {
    const h = tasks[hub - 1];
    Object.assign(h, { status: 'pending', owner: '', blockedBy: [] });
    for (let k = 1; k <= 10; k++) {
      const d = tasks[hub - 1 + k];
      if (!d || d.status === 'completed') continue;
      link(h, d);
    }
  }
  for (const t of tasks) writeFileSync(join(dir, `task_${t.id}.json`), serializeTask(t));
  writeFileSync(join(dir, '.highwatermark'), `${count}\n`);
  return { root, dir };
}

/**
 * A board that has been worked through: `count` tasks of which all but the
 * last `open` are completed (the history), the open ones pending and ready,
 * some of them waiting for completed tasks. For `claim --next` timing.
 */
export function makeHistoryBoard(count, open, { parents = false } = {}) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-bench-')));
  const dir = join(root, '.tasks');
  mkdirSync(join(dir, '.runtime'), { recursive: true });
  writeFileSync(join(dir, '.gitignore'), BOARD_GITIGNORE);
  const tasks = [];
  for (let id = 1; id <= count; id++) {
    const done = id <= count - open;
    tasks.push({
      id,
      subject: `Task number ${id} of the benchmark board`,
      description: 'A description of moderate length, as people write them.',
      status: done ? 'completed' : 'pending',
      owner: done ? `agent-${id % 4}` : '',
      blockedBy: [],
      blocks: [],
      extra: {},
    });
  }
  for (const t of tasks) {
    if (t.id > 10 && t.id % 3 === 0) link(tasks[t.id - 1 - 5], t);
    if (t.id > 20 && t.id % 5 === 0) link(tasks[t.id - 1 - 17], t);
  }
  if (parents) {
    // The history's epics, completed with their children; and among the open tasks an urgent epic with four
    // children, which claim --next passes over for them (docs/protocol.md, "Parents").
    addParents(tasks.slice(0, count - open), 1);
    const epic = tasks[count - open];
    Object.assign(epic, { priority: 1 });
    for (const child of tasks.slice(count - open + 1, count - open + 5)) child.parent = epic.id;
  }
  for (const t of tasks) writeFileSync(join(dir, `task_${t.id}.json`), serializeTask(t));
  writeFileSync(join(dir, '.highwatermark'), `${count}\n`);
  return { root, dir };
}

/**
 * Epics: every 100th task from `first` (P1) and the 20 tasks after it: four
 * stories, each with the two tasks after it as its children, and eight tasks
 * of the epic's own, so the hierarchy has three levels. A parent with an open
 * child is not completed (the rule the commands keep): it is made pending.
 */
function addParents(tasks, first) {
  for (let at = first - 1; at < tasks.length; at += 100) {
    const epic = tasks[at];
    epic.priority = 1;
    const children = tasks.slice(at + 1, at + 21);
    for (const [k, child] of children.entries()) child.parent = k % 5 === 1 || k % 5 === 2 ? children[k - (k % 5)].id : epic.id;
    const isOpen = (t) => t.status !== 'completed';
    for (const parent of [...children.filter((_, k) => k % 5 === 0), epic]) {
      if (parent.status === 'completed' && children.some((t) => t.parent === parent.id && isOpen(t))) Object.assign(parent, { status: 'pending', owner: '' });
    }
  }
}

function link(blocker, waiter) {
  if (!blocker.blocks.includes(waiter.id)) blocker.blocks.push(waiter.id);
  if (blocker.status !== 'completed' && !waiter.blockedBy.includes(blocker.id)) waiter.blockedBy.push(blocker.id);
}

export function verdict(ok) {
  return ok ? 'PASS' : 'MISS';
}

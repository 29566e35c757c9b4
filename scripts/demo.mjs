#!/usr/bin/env node
// `npm run demo`: the main job, for real. Copies the example board into a
// fresh git repository, starts three `tasks worker` processes in three linked
// worktrees (agent-1..3) whose command simulates a few hundred ms of work (one
// task fails once and is retried), prints the board as it changes, finishes
// the person's task in progress when only it holds the rest up, and checks the
// event log at the end: exit 1 if any task was done twice, done before its
// blockers, or left unfinished. `--keep` keeps the temp repository.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { TaskStore, isReady, renderBoard } from '../packages/core/dist/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'packages/cli/bin/tasks.js');
const EXAMPLE = join(ROOT, '.tasks.example');
const WORKERS = ['agent-1', 'agent-2', 'agent-3'];
const FAIL_ONCE = 2; // the task whose first attempt fails
const keep = process.argv.includes('--keep');
const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1).padStart(4)}s`;
const say = (line) => process.stdout.write(`${elapsed()}  ${line}\n`);

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'demo',
  GIT_AUTHOR_EMAIL: 'demo@dotasks.invalid',
  GIT_COMMITTER_NAME: 'demo',
  GIT_COMMITTER_EMAIL: 'demo@dotasks.invalid',
};
const git = (cwd, args) => execFileSync('git', args, { cwd, env: gitEnv, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
const cleanEnv = (extra = {}) => {
  const env = { ...process.env, NO_COLOR: '1' };
  for (const key of Object.keys(env)) if (key.startsWith('TASKS_') || key.startsWith('TASK_')) delete env[key];
  return { ...env, ...extra };
};
const tasks = (cwd, args, env = {}) => spawnSync(process.execPath, [BIN, ...args], { cwd, env: cleanEnv(env), encoding: 'utf8' });

/** The example board of `.tasks.example/`, built through the core when that folder is not there. */
async function buildExampleBoard(dir) {
  const store = TaskStore.init(dir);
  const add = (subject, blockedBy = [], metadata) => store.createTask({ subject, blockedBy, metadata }, { actor: 'demo' });
  const plan = { plan: 'refactor-auth' };
  await add('Parse AST');
  await add('Transform AST', [1]);
  await add('Emit output', [1]);
  await add('Run tests', [2, 3]);
  await add('Design the token schema', [], plan);
  await add('Refactor auth middleware', [5], plan);
  await add('Add the OAuth endpoint', [6], plan);
  await add('Write auth unit tests', [6, 7], plan);
  await add('Update the API docs', [7], plan);
  await store.completeTask(5, { actor: 'alice' });
  await store.startTask(6, { owner: 'alice', actor: 'alice' });
}

// ---- a repository with the example board ---------------------------------
const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-demo-')));
const repo = join(tmp, 'repo');
git(tmp, ['init', '-q', '-b', 'main', repo]);
writeFileSync(join(repo, 'README.md'), '# demo project\n');
const board = join(repo, '.tasks');
if (existsSync(EXAMPLE)) {
  cpSync(EXAMPLE, board, { recursive: true, filter: (src) => !src.includes('.runtime') && !src.endsWith('.lock') });
  say(`copied the example board (.tasks.example/) into ${repo}`);
} else {
  await buildExampleBoard(board);
  say(`built the example board in ${repo} (no .tasks.example/ found)`);
}
git(repo, ['add', '-A']);
git(repo, ['commit', '-q', '-m', 'the example board']);

const store = new TaskStore(board);
const initial = store.loadBoard();
const blockersOf = new Map(initial.tasks.map((t) => [t.id, [...t.blockedBy]]));
const closedAtStart = new Set(initial.tasks.filter((t) => t.status === 'completed' || t.status === 'deleted').map((t) => t.id));
const personal = initial.tasks.filter((t) => t.status === 'in_progress');
const startSeq = store.readEvents().at(-1)?.seq ?? 0;

// ---- the simulated agent command -----------------------------------------
const work = join(tmp, 'work.mjs');
writeFileSync(
  work,
  `import { existsSync, writeFileSync } from 'node:fs';
const id = Number(process.env.TASK_ID);
const ms = 250 + ((id * 97) % 250);
process.stderr.write(\`  \${process.env.TASKS_OWNER}: working on #\${id} \${process.env.TASK_SUBJECT} (\${ms} ms)\\n\`);
await new Promise((r) => setTimeout(r, ms));
const marker = ${JSON.stringify(join(tmp, 'failed-once'))};
if (id === ${FAIL_ONCE} && !existsSync(marker)) {
  writeFileSync(marker, '');
  process.stderr.write('  simulated failure: exit 1\\n');
  process.exit(1);
}
`,
);

console.log('');
console.log(renderBoard(initial));
console.log('');
say(`three workers (${WORKERS.join(', ')}), each in its own linked worktree; each task takes 250-500 ms, #${FAIL_ONCE} fails once`);
for (const t of personal) say(`#${t.id} is in progress by the person ${t.owner}; the demo completes it as ${t.owner} once only it holds the rest up`);

// ---- three workers in three worktrees ------------------------------------
const workers = WORKERS.map((name) => {
  const path = join(tmp, name);
  git(repo, ['worktree', 'add', '-q', '--detach', path]);
  // The owner is the worktree's name and the board the main worktree's
  // (docs/protocol.md, "Who acts" and "Where the board is").
  const child = spawn(process.execPath, [BIN, 'worker', '--', process.execPath, work], { cwd: path, env: cleanEnv() });
  let buffer = '';
  child.stderr.on('data', (d) => {
    buffer += d;
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      say(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
  });
  child.stdout.resume();
  return { name, child, exit: new Promise((resolve) => child.on('close', (code) => resolve(code))) };
});

// ---- watch the board; finish the person's task when only it blocks ----
let running = workers.length;
for (const w of workers) w.exit.then(() => running--);
let lastBoard = '';
const pending = new Set(personal.map((t) => t.id));
const deadline = Date.now() + 60_000;
while (running > 0 && Date.now() < deadline) {
  const snap = store.loadBoard();
  const text = renderBoard(snap);
  if (text !== lastBoard) {
    lastBoard = text;
    console.log(text.replace(/^/gm, '        | '));
  }
  const lookup = (id) => snap.byId.get(id);
  const anyReady = snap.tasks.some((t) => isReady(t, lookup));
  const workersBusy = snap.tasks.some((t) => t.status === 'in_progress' && !pending.has(t.id));
  if (pending.size && !anyReady && !workersBusy) {
    for (const id of pending) {
      const owner = snap.byId.get(id).owner;
      say(`${owner} (a person) completes #${id}: only it holds the rest up (tasks done ${id}, as ${owner})`);
      const r = tasks(repo, ['done', String(id)], { TASKS_OWNER: owner });
      if (r.status !== 0) say(`tasks done ${id} failed: ${r.stderr.trim()}`);
      pending.delete(id);
    }
  }
  await sleep(100);
}
const giveUp = new AbortController();
const codes = await Promise.race([
  Promise.all(workers.map((w) => w.exit)),
  sleep(Math.max(0, deadline - Date.now()), undefined, { signal: giveUp.signal }).then(
    () => undefined,
    () => undefined,
  ),
]);
giveUp.abort();
if (!codes) for (const w of workers) w.child.kill('SIGTERM');

// ---- check the run from the event log ------------------------------------
const final = store.loadBoard();
console.log('');
console.log(renderBoard(final));
const events = store.readEvents(startSeq);
const problems = [];
const completedAt = new Map();
for (const e of events.filter((e) => e.type === 'completed')) {
  if (completedAt.has(e.task) || closedAtStart.has(e.task)) problems.push(`#${e.task} was completed twice`);
  completedAt.set(e.task, e.seq);
}
for (const e of events.filter((e) => e.type === 'claimed' || e.type === 'started')) {
  for (const b of blockersOf.get(e.task) ?? []) {
    if (!closedAtStart.has(b) && !(completedAt.get(b) < e.seq)) problems.push(`#${e.task} was claimed (event ${e.seq}) before its blocker #${b} was completed`);
  }
}
for (const t of final.tasks) {
  if (t.status === 'deleted') continue;
  if (t.status !== 'completed') problems.push(`#${t.id} was left ${t.status}`);
  else if (!closedAtStart.has(t.id) && !completedAt.has(t.id)) problems.push(`#${t.id} is completed but no event says so`);
}
if (!codes) problems.push('the workers did not finish within 60 s');
else codes.forEach((code, i) => code !== 0 && problems.push(`${WORKERS[i]} exited ${code}`));
const failures = events.filter((e) => e.type === 'released' && e.reason === 'failed').length;
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log('');
console.log(`${events.length} events · ${completedAt.size} tasks completed by the workers and people · ${failures} failed attempt(s) retried · ${seconds} s`);
if (keep) console.log(`kept ${tmp} (tasks list --dir ${board})`);
else rmSync(tmp, { recursive: true, force: true });
if (problems.length) {
  for (const p of problems) console.error(`demo: ${p}`);
  process.exitCode = 1;
} else {
  console.log('every task completed exactly once, none before its blockers');
}

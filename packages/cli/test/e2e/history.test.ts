import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TASKS_BIN, cleanEnv, createTasks, tasks, tempBoard } from '../helpers.js';
import { startTasks, type TasksProcess } from '../agents-helpers.js';

// A board of 100,000 tasks, 99,900 of them completed: the everyday commands
// read the open work and fold the history (docs/protocol.md, "A board's
// history"), and a hand edit of a completed task is still seen.
const N = 100_000;
const OPEN = 100;
let board: ReturnType<typeof tempBoard>;
const running: TasksProcess[] = [];

/** The files, written directly (the history as a person would have it after months): completed tasks, then the open work. */
function writeHistory(dir: string): void {
  for (let id = 1; id <= N; id++) {
    const open = id > N - OPEN;
    const blockedBy = open && id % 2 === 0 ? [id - 1] : [];
    const blocks = open && id % 2 === 1 && id < N ? [id + 1] : [];
    writeFileSync(
      join(dir, `task_${id}.json`),
      `${JSON.stringify({ id, subject: `Step ${id}`, description: '', status: open ? 'pending' : 'completed', owner: '', blockedBy, blocks }, null, 2)}\n`,
    );
  }
  writeFileSync(join(dir, '.highwatermark'), `${N}\n`);
}

function run(args: string[]) {
  return tasks(board.root, args);
}

/** Reopens a completed task by hand, in place (same file, same inode): an editor that writes the file over. */
function reopenInPlace(id: number): void {
  const path = join(board.board, `task_${id}.json`);
  writeFileSync(path, readFileSync(path, 'utf8').replace('"completed"', '"pending"'));
}

beforeAll(() => {
  board = tempBoard();
  writeHistory(board.board);
  // The first command makes the board index: a pass over every file.
  expect(run(['list']).code).toBe(0);
});
afterAll(async () => {
  for (const p of running) p.child.kill('SIGKILL');
  await Promise.all(running.map((p) => p.done));
  board?.cleanup();
});

describe(`a board of ${N.toLocaleString('en')} tasks, ${OPEN} of them open`, () => {
  it('tasks list shows the open work in full and folds the history, opening no completed task', () => {
    const r = run(['list']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(OPEN + 2);
    expect(lines[0]).toBe(`[ ] #${N - OPEN + 1}: Step ${N - OPEN + 1}`);
    expect(lines.at(-2)).toBe('… 99,900 completed not listed: tasks list --all lists them');
    expect(lines.at(-1)).toMatch(/^99900\/100000 done · ready: #99901, #99903/);
    // Under strace: no task file is opened, and few are looked at.
    const trace = join(board.root, 'list.trace');
    const s = spawnSync('strace', ['-f', '-qq', '-e', 'trace=openat,statx,newfstatat,stat,lstat', '-o', trace, process.execPath, TASKS_BIN, 'list'], {
      cwd: board.root,
      env: cleanEnv(),
      encoding: 'utf8',
    });
    expect(s.status).toBe(0);
    const calls = readFileSync(trace, 'utf8').split('\n');
    const taskCalls = (syscall: RegExp) => calls.filter((l) => syscall.test(l) && /task_[0-9]+\.json"/.test(l)).length;
    expect(taskCalls(/openat\(/)).toBe(0);
    expect(taskCalls(/(statx|newfstatat|stat|lstat)\(/)).toBeLessThanOrEqual(OPEN + 1000);
  });

  it('tasks ready, search and show answer from the open work', () => {
    expect(run(['ready']).stdout.split('\n')[0]).toBe(`[ ] #${N - OPEN + 1}: Step ${N - OPEN + 1}`);
    const found = run(['search', 'Step 99950']);
    expect(found.stdout).toContain('#99950: Step 99950');
    expect(found.stdout).toContain('1 match among the open work (99,900 completed not searched: tasks search --all "Step 99950")');
    expect(run(['show', '99950']).stdout).toContain('blockedBy:   #99949');
  });

  it('tasks create takes the next id without listing the board folder or reading the history', () => {
    // Under strace: the folder is never opened for listing, and the index's history file is not read.
    const trace = join(board.root, 'create.trace');
    const s = spawnSync('strace', ['-f', '-qq', '-e', 'trace=openat', '-o', trace, process.execPath, TASKS_BIN, 'create', 'One more step'], {
      cwd: board.root,
      env: cleanEnv(),
      encoding: 'utf8',
    });
    expect(s.status, s.stderr).toBe(0);
    expect(s.stdout).toBe(`created #${N + 1}: One more step\n`);
    const opens = readFileSync(trace, 'utf8').split('\n');
    expect(opens.filter((l) => l.includes(`"${board.board}", `) && l.includes('O_DIRECTORY'))).toEqual([]);
    expect(opens.filter((l) => l.includes('board-history'))).toEqual([]);
    expect(readFileSync(join(board.board, '.highwatermark'), 'utf8')).toBe(`${N + 1}\n`);
    expect(run(['list']).stdout).toContain(`[ ] #${N + 1}: One more step`);
  });

  it("a worker gives its command the results of the task's blockers without reading the history", () => {
    // The most urgent task waits for #5, completed long ago with a result: the worker takes it first.
    const five = join(board.board, 'task_5.json');
    writeFileSync(five, readFileSync(five, 'utf8').replace('"blocks": []', '"blocks": [],\n  "result": "the parser is in src/parse.ts"'));
    const created = run(['create', 'Build on step 5', '--blocked-by', '5', '--priority', '0']);
    expect(created.code, created.stderr).toBe(0);
    const id = Number(/created #(\d+)/.exec(created.stdout)![1]);
    // The hand edit of #5 taken into the board index's history (a reading of the whole board does that), before the trace.
    expect(run(['list', '--all']).stdout).toContain('[x] #5: Step 5');
    const out = join(board.root, 'upstream.json');
    const trace = join(board.root, 'worker.trace');
    const args = ['worker', '--max-tasks', '1', '--owner', 'w1', '--', 'sh', '-c', `printf '%s' "$TASK_UPSTREAM" > ${JSON.stringify(out)}`];
    const s = spawnSync('strace', ['-f', '-qq', '-e', 'trace=openat', '-o', trace, process.execPath, TASKS_BIN, ...args], {
      cwd: board.root,
      env: cleanEnv(),
      encoding: 'utf8',
    });
    expect(s.status, s.stderr).toBe(0);
    expect(JSON.parse(run(['show', String(id), '--json']).stdout)).toMatchObject({ status: 'completed', owner: 'w1' });
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual([{ id: 5, subject: 'Step 5', result: 'the parser is in src/parse.ts' }]);
    expect(
      readFileSync(trace, 'utf8')
        .split('\n')
        .filter((l) => l.includes('board-history')),
      'the history file opened',
    ).toEqual([]);
  });

  it('a completed task edited by hand is seen by list --all at once', () => {
    reopenInPlace(500);
    const all = run(['list', '--all']).stdout;
    expect(all).toContain('[ ] #500: Step 500');
    expect(all).toContain('[x] #4242: Step 4242');
  });

  it('with the watcher running, a completed task reopened by hand is in the open work of the next tasks list', async () => {
    const watcher = startTasks(board.root, ['watch']);
    running.push(watcher);
    await vi.waitFor(() => expect(watcher.stderr()).toContain('watching'), { timeout: 60_000, interval: 50 });
    reopenInPlace(70_000);
    // The watcher takes it into the board index (its closed ranges no longer hold #70000)...
    const index = join(board.board, '.runtime', 'board-index.v3');
    const closedRanges = () => JSON.parse(readFileSync(index, 'utf8').slice(0, readFileSync(index, 'utf8').indexOf('\n'))).closed as [number, number][];
    await vi.waitFor(() => expect(closedRanges().some(([a, b]) => a <= 70_000 && 70_000 <= b)).toBe(false), { timeout: 60_000, interval: 100 });
    // ...so one look at the open work lists it.
    expect(run(['list']).stdout).toContain('[ ] #70000: Step 70000');
  });
});

describe('foldHistory in config.json', () => {
  it('folds from that many closed tasks; search --all searches the history; a bad value is one line', async () => {
    const small = tempBoard();
    try {
      await createTasks(small.board, ['Parse the input', 'Parse the flags', 'Write the docs']);
      const t = (args: string[]) => tasks(small.root, args);
      expect(t(['done', '1']).code).toBe(0);
      expect(t(['list']).stdout).toContain('[x] #1: Parse the input');
      writeFileSync(join(small.board, 'config.json'), JSON.stringify({ foldHistory: 0 }));
      expect(t(['list']).stdout.split('\n')).toEqual([
        '[ ] #2: Parse the flags',
        '[ ] #3: Write the docs',
        '… 1 completed not listed: tasks list --all lists them',
        '1/3 done · ready: #2, #3',
        '',
      ]);
      expect(t(['search', 'parse']).stdout).toContain('1 match among the open work (1 completed not searched: tasks search --all "parse")');
      expect(t(['search', '--all', 'parse']).stdout).toContain('[x] #1: Parse the input');
      writeFileSync(join(small.board, 'config.json'), JSON.stringify({ foldHistory: -1 }));
      const bad = t(['list']);
      expect(bad.code).toBe(1);
      expect(bad.stderr.trim().split('\n')).toEqual([expect.stringContaining('"foldHistory" must be a whole number of tasks (0 or more)')]);
    } finally {
      small.cleanup();
    }
  });
});

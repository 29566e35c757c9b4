import { execFileSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';

// Counts the task files read (by the exact pass and the open view alike).
const reads = vi.hoisted(() => ({ paths: [] as string[] }));
vi.mock('../format/task-file.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../format/task-file.js')>();
  return {
    ...original,
    readTaskFile: (path: string) => {
      reads.paths.push(path);
      return original.readTaskFile(path);
    },
  };
});

import { loadBoardSnapshot } from './board-index.js';
import { BOARD_HISTORY_FILE } from './index-file.js';
import { blockersAmong } from './folded-view.js';
import { SWEEP_FILES } from './history-sweep.js';
import { loadOpenSnapshot } from './open-view.js';
import { upstreamOf } from './results.js';
import { createRecord, isClosed, serializeTask, type Task } from '../format/format.js';
import { boardLookup, hierarchyOf } from '../graph/hierarchy.js';
import { readyOrder } from '../graph/ready-order.js';
import { countTasks } from '../views/render.js';
import { renderAgentBoard } from '../views/agent-board.js';
import { TaskStore } from '../store.js';
import type { BoardSnapshot } from './store-types.js';
import { tempBoard } from '../../test/helpers/temp-board.js';
import { settleClock } from '../../test/helpers/settle-clock.js';

function makeTask(id: number, fields: Partial<Task> = {}): Task {
  return { id, subject: `Task ${id}`, description: '', status: 'completed', owner: '', blockedBy: [], blocks: [], extra: createRecord(), ...fields };
}

/**
 * A board written file by file: `closed` completed tasks (every 50th deleted,
 * every 10th a child of the one before its ten), then `open` pending tasks,
 * each blocked by a closed one, an epic among them with closed and open
 * children, and a chain among the open ones.
 */
function writeBoard(dir: string, closed: number, open: number): void {
  const tasks: Task[] = [];
  for (let id = 1; id <= closed; id++) tasks.push(makeTask(id, id % 50 === 0 ? { status: 'deleted' } : id % 10 === 0 ? { parent: id - 9 } : {}));
  const epic = closed + 1;
  for (let id = closed + 1; id <= closed + open; id++) tasks.push(makeTask(id, { status: 'pending', priority: id % 5 }));
  const link = (from: number, to: number) => {
    tasks[from - 1].blocks.push(to);
    tasks[to - 1].blockedBy.push(from);
  };
  for (let id = closed + 2; id <= closed + open; id++) {
    link(id - closed, id); // a closed blocker: not in the way
    if (id % 3 === 0 && id > closed + 2) link(id - 1, id); // an open one: in the way
  }
  // The epic: three closed children (one deleted) and two open ones.
  for (const child of [closed - 3, closed - 2, closed - 1, closed + 2, closed + 3]) tasks[child - 1].parent = epic;
  tasks[closed - 3].status = 'deleted';
  for (const t of tasks) writeFileSync(join(dir, `task_${t.id}.json`), serializeTask(t));
  writeFileSync(join(dir, '.highwatermark'), `${closed + open}\n`);
}

function startReading(): string[] {
  reads.paths.length = 0;
  return reads.paths;
}

/** What a listing derives from a board, for comparing a folded view with the whole board. */
function derived(snapshot: BoardSnapshot) {
  const lookup = boardLookup(snapshot);
  const hierarchy = hierarchyOf(snapshot);
  const open = snapshot.tasks.filter((t) => !isClosed(t.status));
  return {
    open,
    counts: countTasks(snapshot),
    ready: readyOrder(snapshot.tasks, lookup).map((r) => [r.id, r.priority, r.unblocks]),
    progress: open.map((t) => [t.id, hierarchy.progress(t.id) ?? null, [...hierarchy.openChildren(t.id)]]),
  };
}

async function bigBoard(closed: number, open: number): Promise<{ root: string; dir: string; store: TaskStore }> {
  const board = tempBoard('dotasks-open-view-');
  writeBoard(board.dir, closed, open);
  await settleClock(board.root, board.dir);
  loadBoardSnapshot(board.dir); // the index, with its history
  return board;
}

describe('the open view of a board with a long history', () => {
  it('reads none of the closed tasks, and says what reading the whole board says', async () => {
    const { dir } = await bigBoard(3000, 40);
    const read = startReading();
    const folded = loadOpenSnapshot(dir);
    expect(read).toEqual([]);
    expect(folded.history).toEqual({ completed: 2939, deleted: 61 });
    expect(folded.tasks.map((t) => t.id)).toEqual(Array.from({ length: 40 }, (_, i) => 3001 + i));
    const whole = loadBoardSnapshot(dir);
    expect(derived(folded)).toStrictEqual(derived(whole));
    // The epic's progress counts its closed children: two of four done (the deleted one does not count).
    expect(hierarchyOf(folded).progress(3001)).toEqual({ done: 2, total: 4 });
  });

  it('takes a task closed since out of the open work without rewriting the history', async () => {
    const { dir, store } = await bigBoard(3000, 40);
    const history = join(dir, '.runtime', BOARD_HISTORY_FILE);
    const before = statSync(history);
    await store.completeTask(3040, { actor: 'me' });
    await store.createTask({ subject: 'Made since' });
    const first = loadOpenSnapshot(dir);
    expect(first.history).toEqual({ completed: 2940, deleted: 61 });
    expect(first.tasks.map((t) => t.id)).toContain(3041);
    expect(first.tasks.map((t) => t.id)).not.toContain(3040);
    // Learned once, kept in the index: the next look reads nothing, and the history file is the same file.
    const read = startReading();
    const second = loadOpenSnapshot(dir);
    expect(read).toEqual([]);
    expect(derived(second)).toStrictEqual(derived(first));
    const after = statSync(history);
    expect([after.ino, after.mtimeMs, after.size]).toEqual([before.ino, before.mtimeMs, before.size]);
    // And an exact pass over that index finds the board the files hold.
    expect(derived(loadBoardSnapshot(dir))).toStrictEqual(derived(second));
  });

  it("sees a command's change to a completed task at the next look, not at the sweep", async () => {
    const { dir, store } = await bigBoard(3000, 10);
    const before = loadOpenSnapshot(dir).indexKey;
    expect(before).toBeDefined();
    await store.updateTask(1501, { description: 'found a second cause' }, { actor: 'me' });
    const read = startReading();
    const after = loadOpenSnapshot(dir);
    expect(read).toEqual([store.taskPath(1501)]);
    expect(after.indexKey).toBeDefined();
    expect(after.indexKey).not.toBe(before);
    expect(after.history).toEqual({ completed: 2939, deleted: 61 });
    // Learned: the next look reads nothing and names the same index.
    startReading();
    expect(loadOpenSnapshot(dir).indexKey).toBe(after.indexKey);
    expect(read).toEqual([]);
    expect(derived(loadBoardSnapshot(dir))).toStrictEqual(derived(after));
  });

  it('finds a closed task reopened by hand in place within one sweep of the history, and an exact pass at once', async () => {
    const { dir, store } = await bigBoard(3000, 10);
    loadOpenSnapshot(dir);
    const path = store.taskPath(1501);
    writeFileSync(path, readFileSync(path, 'utf8').replace('"completed"', '"pending"'));
    expect(loadBoardSnapshot(dir, { claimTrust: false }).byId.get(1501)?.status).toBe('pending');
    // Every closed file is looked at within closed / SWEEP_FILES looks.
    let seenAfter = 0;
    for (let look = 1; look <= Math.ceil(3000 / SWEEP_FILES) + 1 && !seenAfter; look++) {
      if (loadOpenSnapshot(dir).tasks.some((t) => t.id === 1501)) seenAfter = look;
    }
    expect(seenAfter).toBeGreaterThan(0);
    expect(loadOpenSnapshot(dir).history).toEqual({ completed: 2938, deleted: 61 });
  });

  it('sees at once what a git checkout brings back of a closed task', async () => {
    const { root, dir, store } = await bigBoard(1000, 5);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: root, stdio: 'pipe', encoding: 'utf8' });
    git('init', '-q');
    git('add', '.tasks');
    git('-c', 'user.name=t', '-c', 'user.email=t@t.invalid', 'commit', '-qm', 'board');
    await store.completeTask(1004, { actor: 'me' });
    git('add', '.tasks');
    git('-c', 'user.name=t', '-c', 'user.email=t@t.invalid', 'commit', '-qm', 'done');
    await settleClock(root, dir);
    loadBoardSnapshot(dir);
    expect(loadOpenSnapshot(dir).tasks.map((t) => t.id)).not.toContain(1004);
    // The older version, pending again, comes back through git: the open view looks again at once.
    git('checkout', 'HEAD~1', '--', '.tasks/task_1004.json');
    expect(loadOpenSnapshot(dir).tasks.map((t) => t.id)).toContain(1004);
  });

  it('gives the agents the board they got from every file', async () => {
    const { dir, store } = await bigBoard(3000, 40);
    const read = startReading();
    const open = renderAgentBoard(store.loadOpenWork(), { budget: 4000 });
    expect(read).toEqual([]);
    expect(open).toBe(renderAgentBoard(store.loadBoard(), { budget: 4000 }));
    expect(open).toContain('(2939 completed tasks and 61 deleted tasks not shown');
    expect(loadOpenSnapshot(dir).tasks).toHaveLength(40);
    // What each open task's blockers came to (their results), as the whole board has it: a completed blocker has left blockedBy.
    await store.completeTask(3002, { actor: 'me', result: 'the parser' });
    const folded = store.loadOpenWork();
    const whole = store.loadBoard();
    for (const task of folded.tasks)
      expect(upstreamOf(task, blockersAmong(folded), (n) => store.peekTask(n))).toStrictEqual(upstreamOf(task, whole.tasks, (n) => whole.byId.get(n)));
    expect(upstreamOf(store.getTask(3003), blockersAmong(folded), (n) => store.peekTask(n))).toContainEqual({
      id: 3002,
      subject: 'Task 3002',
      result: 'the parser',
    });
  });

  it('reads the whole board while the history is short', async () => {
    const { dir } = await bigBoard(150, 5);
    const view = loadOpenSnapshot(dir);
    expect(view.history).toBeUndefined();
    expect(view.tasks).toHaveLength(155);
    expect(loadOpenSnapshot(dir, { foldAt: 100 }).history).toEqual({ completed: 146, deleted: 4 });
  });
});

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readyOrder, type BoardSnapshot, type Lease, type Task } from '@dotasks/core/internal';
import {
  buildColumns,
  cardDetails,
  cardHeading,
  cardTitle,
  describeEvent,
  familyLines,
  leaseLeft,
  moveSelection,
  nextPriorityFilter,
  notesOf,
  scrollStart,
  settleSelection,
} from './board-model.js';
import { isWatchedPath } from './board-source.js';

function task(id: number, fields: Partial<Task> = {}): Task {
  return { id, subject: `Task ${id}`, description: '', status: 'pending', owner: '', blockedBy: [], blocks: [], extra: {}, ...fields };
}

function snapshot(...tasks: Task[]): BoardSnapshot {
  return { tasks, byId: new Map(tasks.map((t) => [t.id, t])), problems: [] };
}

const ids = (cards: { task: Task }[]) => cards.map((c) => c.task.id);

describe('the columns', () => {
  const board = snapshot(
    task(1, { status: 'completed', blocks: [2, 3] }),
    task(2, { status: 'in_progress', owner: 'agent-1', activeForm: 'transforming', blocks: [4] }),
    task(3, { subject: 'Emit output', description: 'write the FILES', blocks: [4] }),
    task(4, { blockedBy: [2, 3] }),
    task(5, { status: 'deleted' }),
    task(6, { owner: 'bob' }),
    task(7, { status: 'completed' }),
    task(8, { blockedBy: [1] }), // a closed blocker left behind by a hand edit does not block
  );

  it('sorts tasks by readiness; deleted ones are left out; Done is latest first by the event log', () => {
    const columns = buildColumns(board, { completedSeq: new Map([[1, 10]]) });
    expect(ids(columns.ready)).toEqual([3, 6, 8]);
    expect(ids(columns.blocked)).toEqual([4]);
    expect(ids(columns.in_progress)).toEqual([2]);
    expect(ids(columns.done)).toEqual([1, 7]);
    expect(ids(buildColumns(board).done)).toEqual([7, 1]);
    expect(columns.blocked[0].waitsFor).toEqual([2, 3]);
  });

  it('a parent with open children waits for them in Blocked, not in Ready; with its children done it is ready', () => {
    const epic = snapshot(task(1, { subject: 'Epic' }), task(2, { parent: 1 }), task(3, { parent: 1, status: 'completed' }), task(4, { parent: 1 }));
    const columns = buildColumns(epic);
    expect(ids(columns.ready)).toEqual([2, 4]);
    expect(ids(columns.blocked)).toEqual([1]);
    expect(columns.blocked[0].waitsFor).toEqual([2, 4]);
    const done = snapshot(task(1, { subject: 'Epic' }), task(2, { parent: 1, status: 'completed' }));
    expect(ids(buildColumns(done).ready)).toEqual([1]);
  });

  it('groups children right under their parent in a column, a group at the place of its best-ranked member', () => {
    const epic = snapshot(
      task(1, { subject: 'Task 1' }),
      task(3, { parent: 9, blockedBy: [1] }),
      task(4, { parent: 9, status: 'completed' }),
      task(5, { blockedBy: [1] }),
      task(6, { parent: 3 }),
      task(7, { parent: 9 }),
      task(9, { subject: 'Release epic' }),
      task(10, { parent: 11 }),
      task(11, { parent: 10 }),
    );
    const columns = buildColumns(epic);
    // #9 waits for its children #3 and #7, #3 for #1 and its child #6; #9's group stands where #3 (its first by id) would.
    expect(ids(columns.blocked)).toEqual([9, 3, 5, 10, 11]);
    expect(columns.blocked.map((c) => c.depth ?? 0)).toEqual([0, 1, 0, 0, 1]);
    expect(cardHeading(columns.blocked[0])).toBe('#9 Release epic (1/3 done)');
    expect(cardHeading(columns.blocked[1])).toBe('└ #3 Task 3 (0/1 done)');
    // A child whose parent stands elsewhere says whose it is, in a line of its own.
    expect(ids(columns.ready)).toEqual([1, 6, 7]);
    expect(cardDetails(columns.ready[1], 'ready')).toEqual(['↑ #3 Task 3']);
    expect(cardDetails(columns.ready[2], 'ready')).toEqual(['↑ #9 Release epic']);
    expect(cardDetails(columns.done[0], 'done')).toEqual(['↑ #9 Release epic']);
    // A cycle of parents made by hand: each of its tasks once.
    expect(cardDetails(columns.blocked[3], 'blocked')).toEqual(['↑ #11 Task 11', 'waits for #11']);
    // Done is latest first: the parent's group takes the place of its latest child.
    const done = snapshot(task(1, { status: 'completed' }), task(2, { status: 'completed', parent: 1 }), task(3, { status: 'completed' }));
    const seq = new Map([
      [1, 5],
      [2, 10],
      [3, 7],
    ]);
    const cards = buildColumns(done, { completedSeq: seq }).done;
    expect(ids(cards)).toEqual([1, 2, 3]);
    expect(cardHeading(cards[1])).toBe('└ #2 Task 2');
    // Deeper levels indent further; a long parent subject is cut short.
    const deep = snapshot(
      task(1, { subject: 'A very long epic subject that goes on' }),
      task(2, { parent: 1 }),
      task(3, { parent: 2 }),
      task(4, { parent: 3 }),
    );
    const blocked = buildColumns(deep).blocked;
    expect(blocked.map(cardHeading)).toEqual(['#1 A very long epic subject that goes on (0/1 done)', '└ #2 Task 2 (0/1 done)', '  └ #3 Task 3 (0/1 done)']);
    expect(cardDetails(buildColumns(deep).ready[0], 'ready')).toEqual(['↑ #3 Task 3']);
    expect(cardDetails(buildColumns(deep, { search: 'Task 2' }).blocked[0], 'blocked')).toEqual(['↑ #1 A very long epic subj…', 'waits for #3']);
  });

  it("a task's detail names its chain of parents and its children with their status", () => {
    const tree = snapshot(
      task(1, { subject: 'Epic' }),
      task(2, { subject: 'Story', parent: 1 }),
      task(3, { parent: 2, status: 'completed' }),
      task(4, { parent: 2, status: 'in_progress' }),
      task(5, { parent: 2, status: 'deleted' }),
      task(6, { parent: 8 }),
    );
    expect(familyLines(tree.byId.get(2)!, tree)).toEqual([
      'parent: #1 Epic (pending)',
      'children: 1/2 done',
      '  #3 Task 3 (completed)',
      '  #4 Task 4 (in progress)',
    ]);
    expect(familyLines(tree.byId.get(4)!, tree)).toEqual(['parent: #2 Story (pending) · under #1 Epic (pending)']);
    expect(familyLines(tree.byId.get(6)!, tree)).toEqual(['parent: #8 (missing)']);
    expect(familyLines(task(3), snapshot(task(3)))).toEqual([]);
  });

  it('lists Ready in the order claim --next takes it: priority, the chain of open work behind, id', () => {
    const planned = snapshot(
      task(1, { blocks: [5] }),
      task(2),
      task(3, { priority: 4 }),
      task(4, { priority: 0 }),
      task(5, { blockedBy: [1], blocks: [6] }),
      task(6, { blockedBy: [5] }),
      task(7, { owner: 'bob', priority: 1 }),
    );
    const ready = ids(buildColumns(planned).ready);
    expect(ready).toEqual([4, 7, 1, 2, 3]);
    // The same order as the core's readyOrder, which `tasks ready` and `claim --next` use.
    const lookup = (id: number) => planned.byId.get(id);
    expect(readyOrder(planned.tasks, lookup, 'bob').map((r) => r.id)).toEqual(ready);
    // A filter keeps the order of what is left.
    expect(ids(buildColumns(planned, { priority: 2 }).ready)).toEqual([1, 2]);
  });

  it('searches subject and description, ignoring case', () => {
    expect(ids(buildColumns(board, { search: 'emit' }).ready)).toEqual([3]);
    expect(ids(buildColumns(board, { search: 'files' }).ready)).toEqual([3]);
    expect(ids(buildColumns(board, { search: '  ' }).ready)).toEqual([3, 6, 8]);
  });

  it('says who works on a card, how long its lease has left and where', () => {
    const now = Date.parse('2026-01-01T10:00:00Z');
    const lease: Lease = { task: 2, owner: 'agent-1', host: 'h', claimedAt: '', expiresAt: '2026-01-01T10:14:05.500Z', worktree: '/w/task-2' };
    const columns = buildColumns(board, { leases: new Map([[2, lease]]) });
    expect(cardDetails(columns.in_progress[0], 'in_progress', now)).toEqual(['agent-1: transforming', 'lease 14:06 left', 'wt /w/task-2']);
    expect(cardDetails(columns.blocked[0], 'blocked', now)).toEqual(['waits for #2, #3']);
    expect(cardDetails(columns.ready[1], 'ready', now)).toEqual(['for bob']);
    expect(leaseLeft({ ...lease, expiresAt: null }, now)).toBe('no expiry');
    expect(leaseLeft({ ...lease, expiresAt: '2026-01-01T09:00:00Z' }, now)).toBe('expired');
    expect(leaseLeft({ ...lease, expiresAt: '2026-01-01T11:02:00Z' }, now)).toBe('1h02m left');
    expect(leaseLeft(undefined, now)).toBeUndefined();
  });

  it('describes an event in one short line, at local time', () => {
    const at = new Date(2026, 0, 1, 9, 5, 7).toISOString();
    expect(describeEvent({ seq: 3, at, type: 'completed', task: 2, owner: 'ann' })).toBe('09:05:07 completed #2 by ann');
    expect(describeEvent({ seq: 4, at: 'soon', type: 'cleared' })).toBe('soon cleared');
  });

  it('reads notes only when the task has a notes array', () => {
    expect(notesOf(task(1))).toBeUndefined();
    expect(notesOf(task(1, { extra: { notes: 'not a list' } }))).toBeUndefined();
    expect(notesOf(task(1, { extra: { notes: ['one', { by: 'ann' }] } }))).toEqual(['one', '{"by":"ann"}']);
    expect(notesOf(task(1, { notes: [{ at: '2026-01-01T00:00:00.000Z', owner: 'ann', text: 'CRLF' }] }))).toEqual(['2026-01-01T00:00:00.000Z ann: CRLF']);
  });

  it('the p key cycles all → P0 … P4 → all, and filters the cards by priority (absent counts as P2)', () => {
    const seen: (number | undefined)[] = [];
    let at: number | undefined;
    for (let i = 0; i < 6; i++) seen.push((at = nextPriorityFilter(at)));
    expect(seen).toEqual([0, 1, 2, 3, 4, undefined]);
    const planned = snapshot(task(1, { priority: 0 }), task(2), task(3, { priority: 0, labels: ['ui'] }));
    expect(ids(buildColumns(planned, { priority: 0 }).ready)).toEqual([1, 3]);
    expect(ids(buildColumns(planned, { priority: 2 }).ready)).toEqual([2]);
    expect(cardTitle(planned.byId.get(3)!)).toBe('#3 Task 3 P0 #ui');
  });
});

describe('the selection', () => {
  const columns = buildColumns(snapshot(task(1), task(2), task(3, { status: 'completed' })));

  it('moves across and within columns, staying on its task when the board changes', () => {
    let at = settleSelection({ column: 'ready', index: 0 }, columns);
    expect(at).toEqual({ column: 'ready', index: 0, id: 1 });
    at = moveSelection(at, columns, 0, 1);
    expect(at.id).toBe(2);
    expect(moveSelection(at, columns, 0, 5).id).toBe(2);
    expect(moveSelection(at, columns, 1, 0)).toEqual({ column: 'blocked', index: 0, id: undefined });
    expect(moveSelection(at, columns, 3, 0)).toEqual({ column: 'done', index: 0, id: 3 });
    expect(moveSelection(at, columns, -1, 0).column).toBe('ready');
    // #1 completed elsewhere: the selection stays on #2, now first in Ready.
    const after = buildColumns(snapshot(task(1, { status: 'completed' }), task(2), task(3, { status: 'completed' })));
    expect(settleSelection(at, after)).toEqual({ column: 'ready', index: 0, id: 2 });
    // #2 left the column: the card now at its place is selected.
    expect(settleSelection(at, buildColumns(snapshot(task(1), task(2, { status: 'completed' }))))).toEqual({ column: 'ready', index: 0, id: 1 });
  });

  it('scrolls just enough to keep the selected card visible', () => {
    const heights = [2, 2, 2, 2, 2];
    expect(scrollStart(heights, 0, 5)).toBe(0);
    expect(scrollStart(heights, 1, 5)).toBe(0);
    expect(scrollStart(heights, 2, 5)).toBe(2); // "↑ more", the card, "↓ more"
    expect(scrollStart(heights, 4, 5, 2)).toBe(3);
    expect(scrollStart(heights, 1, 5, 3)).toBe(1);
  });
});

describe('what the board watches', () => {
  const board = join('/repo', '.tasks');
  it.each([
    [board, true],
    [join(board, 'task_3.json'), true],
    [join(board, '.runtime'), true],
    [join(board, '.runtime', 'leases'), true],
    [join(board, '.runtime', 'leases', 'task_3.json'), true],
    [join(board, '.runtime', 'board-index.v3'), false],
    [join(board, '.runtime', 'events.jsonl'), false],
    [join(board, '.runtime', 'journal'), false],
    [join(board, 'task_3.json.lock'), false],
    [join(board, '.board.lock'), false],
    [join(board, '.tmp-x.tmp'), false],
    [join('/repo', 'src'), false],
    [join('/repo', '.tasks-old', 'task_1.json'), false],
  ])('%s: %s', (path, watched) => {
    expect(isWatchedPath(board, path)).toBe(watched);
  });
});

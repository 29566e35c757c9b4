import { describe, expect, it } from 'vitest';
import { explainRank, firstRanked, rankTasks, readyOrder } from './ready-order.js';
import type { Task } from '../format/format.js';

/** Tasks from `[id, priority?, blockedBy, status?]`, both sides of each edge written. */
function board(rows: [number, number | undefined, number[], Task['status']?][]): { tasks: Task[]; lookup: (id: number) => Task | undefined } {
  const tasks = rows.map(([id, priority, blockedBy, status]) => {
    const task = { id, subject: `#${id}`, description: '', status: status ?? 'pending', owner: '', blockedBy, blocks: [] as number[], extra: {} } as Task;
    if (priority !== undefined) task.priority = priority;
    return task;
  });
  const byId = new Map(tasks.map((t) => [t.id, t]));
  for (const t of tasks) for (const b of t.blockedBy) byId.get(b)?.blocks.push(t.id);
  return { tasks, lookup: (id) => byId.get(id) };
}

describe('priority that flows', () => {
  it('takes the most urgent priority set on the open work behind a task, through tasks at the default', () => {
    // #1 P4 → #2 (default) → #3 P1, and #1 → #4 P0 (done): the done one counts for nothing.
    const { tasks, lookup } = board([
      [1, 4, []],
      [2, undefined, [1]],
      [3, 1, [2]],
      [4, 0, [1], 'completed'],
      [5, undefined, []],
    ]);
    const [first, second] = readyOrder(tasks, lookup);
    expect(first).toMatchObject({ id: 1, priority: 1, ownPriority: 4, through: 3 });
    expect(explainRank(first)).toBe('P1 through #3 (own P4) · unblocks 2 (#1 → #2 → #3) · id 1');
    expect(second).toMatchObject({ id: 5, priority: 2, ownPriority: 2 });
    expect(second.through).toBeUndefined();
  });

  it('a default priority does not flow, and a task as urgent as what waits for it keeps its own', () => {
    const { tasks, lookup } = board([
      [1, 4, []],
      [2, undefined, [1]],
      [3, 1, []],
      [4, 1, [3]],
    ]);
    const ranks = rankTasks(tasks, lookup);
    expect(ranks.find((r) => r.id === 1)).toMatchObject({ priority: 4, ownPriority: 4 });
    expect(ranks.find((r) => r.id === 3)?.through).toBeUndefined();
  });

  it('of several urgent dependents, the most urgent; a cycle of a hand-edited board is cut', () => {
    const { tasks, lookup } = board([
      [1, 3, [3]],
      [2, 1, [1]],
      [3, 0, [1]],
      [4, 3, []],
      [5, 2, [4]],
      [6, 0, [5]],
    ]);
    const ranks = rankTasks(tasks, lookup);
    expect(ranks.find((r) => r.id === 4)).toMatchObject({ priority: 0, through: 6 });
    expect(ranks.find((r) => r.id === 1)).toMatchObject({ priority: 0, through: 3 });
  });
});

describe('the first ranked, for a summary', () => {
  it('are the first of rankTasks, on boards with cycles, unordered blocks and closed tasks', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let trial = 0; trial < 400; trial++) {
      const n = 2 + Math.floor(random() * 25);
      const rows: [number, number | undefined, number[], Task['status']][] = [];
      for (let id = 1; id <= n; id++) {
        const blockedBy = [...new Set([random(), random()].filter((r) => r < 0.4).map(() => 1 + Math.floor(random() * n)))].filter((b) => b !== id);
        rows.push([id, random() < 0.4 ? Math.floor(random() * 5) : undefined, blockedBy, random() < 0.2 ? 'completed' : 'pending']);
      }
      const { tasks, lookup } = board(rows);
      if (trial % 2) for (const t of tasks) t.blocks.reverse();
      const ranked = rankTasks(tasks, lookup).map((r) => r.id);
      for (const count of [0, 1, 3, 10]) expect(firstRanked(tasks, lookup, count)).toEqual(ranked.slice(0, count));
    }
  });
});

describe('the ranks of a board in id order, in one pass', () => {
  it('are the walk’s ranks exactly, chains, tie-breaks, inherited priorities and all', () => {
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let trial = 0; trial < 400; trial++) {
      const n = 2 + Math.floor(random() * 40);
      const rows: [number, number | undefined, number[], Task['status']][] = [];
      for (let id = 1; id <= n; id++) {
        // Blockers are lower ids (a board built in order), except now and then one edge the other way.
        const reach = trial % 5 === 4 && random() < 0.05 ? n : id - 1;
        const blockedBy =
          reach < 1
            ? []
            : [...new Set([random(), random(), random()].filter((r) => r < 0.5).map(() => 1 + Math.floor(random() * reach)))].filter((b) => b !== id);
        rows.push([
          id,
          random() < 0.4 ? Math.floor(random() * 5) : undefined,
          blockedBy,
          random() < 0.2 ? 'completed' : random() < 0.1 ? 'in_progress' : 'pending',
        ]);
      }
      const { tasks, lookup } = board(rows);
      for (const t of tasks) if (t.id > 1 && random() < 0.3) t.parent = 1 + Math.floor(random() * (t.id - 1));
      if (trial % 2) for (const t of tasks) t.blocks.reverse();
      const walked = rankTasks(tasks, lookup);
      const allAtOnce = Object.assign((id: number) => lookup(id), { tasks });
      expect(rankTasks(tasks, allAtOnce)).toEqual(walked);
      expect(firstRanked(tasks, allAtOnce, 5)).toEqual(walked.slice(0, 5).map((r) => r.id));
    }
  });
});

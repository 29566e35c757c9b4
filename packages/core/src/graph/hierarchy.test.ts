import { describe, expect, it } from 'vitest';
import { isReady } from './graph.js';
import { AncestorPriority, Hierarchy, ancestorsOf, boardLookup, findParentCycle, parentCycles } from './hierarchy.js';
import { explainRank, readyOrder } from './ready-order.js';
import type { Task } from '../format/format.js';

/** Tasks from `[id, parent?, priority?, status?]`, with no edges. */
function board(rows: [number, number?, number?, Task['status']?][]) {
  const tasks = rows.map(([id, parent, priority, status]) => {
    const task: Task = { id, subject: `#${id}`, description: '', status: status ?? 'pending', owner: '', blockedBy: [], blocks: [], extra: {} };
    if (parent !== undefined) task.parent = parent;
    if (priority !== undefined) task.priority = priority;
    return task;
  });
  const byId = new Map(tasks.map((t) => [t.id, t]));
  return { tasks, byId, lookup: boardLookup({ tasks, byId }) };
}

describe('the hierarchy, derived from the children', () => {
  it('children, open children and progress; deleted children count for nothing', () => {
    const { tasks } = board([[1], [2, 1, undefined, 'completed'], [3, 1], [4, 1, undefined, 'deleted'], [5, 3, undefined, 'in_progress']]);
    const h = new Hierarchy(tasks);
    expect(h.children(1).map((t) => t.id)).toEqual([2, 3, 4]);
    expect(h.openChildren(1)).toEqual([3]);
    expect(h.progress(1)).toEqual({ done: 1, total: 2 });
    expect(h.openChildren(3)).toEqual([5]);
    expect(h.progress(5)).toBeUndefined();
  });

  it('a parent with open children is not ready; once they are closed it is', () => {
    const { byId, lookup } = board([[1], [2, 1], [3, 1, undefined, 'completed']]);
    expect(isReady(byId.get(1)!, lookup)).toBe(false);
    expect(isReady(byId.get(2)!, lookup)).toBe(true);
    // A lookup that knows no hierarchy judges by blockers only, as before.
    expect(isReady(byId.get(1)!, (id) => byId.get(id))).toBe(true);
    byId.get(2)!.status = 'completed';
    expect(isReady(byId.get(1)!, board([[1], [2, 1, undefined, 'completed']]).lookup)).toBe(true);
  });

  it('ancestors stop at a missing parent and at a cycle made by hand', () => {
    const { byId, lookup } = board([[1], [2, 1], [3, 2], [4, 9], [5, 6], [6, 5]]);
    expect(ancestorsOf(byId.get(3)!, lookup)).toEqual([2, 1]);
    expect(ancestorsOf(byId.get(4)!, lookup)).toEqual([9]);
    expect(ancestorsOf(byId.get(5)!, lookup)).toEqual([6]);
  });

  it('finds the cycle a new parent would close, and every cycle a hand edit made, once each', () => {
    const { lookup } = board([[1], [2, 1], [3, 2], [7, 8], [8, 7]]);
    expect(findParentCycle(1, 3, lookup)).toEqual([1, 3, 2, 1]);
    expect(findParentCycle(1, 1, lookup)).toEqual([1, 1]);
    expect(findParentCycle(3, 1, lookup)).toBeUndefined();
    // A cycle above that does not pass through the child is not its doing.
    expect(findParentCycle(9, 7, lookup)).toBeUndefined();
    const { tasks } = board([
      [1, 3],
      [2, 1],
      [3, 2],
      [4, 4],
      [5, 1],
      [6, 7],
      [7, 6],
    ]);
    expect(parentCycles(tasks)).toEqual([
      [1, 3, 2, 1],
      [4, 4],
      [6, 7, 6],
    ]);
  });
});

describe('priority from parents', () => {
  it('a child ranks with the most urgent priority set on its open ancestors, the nearest on a tie', () => {
    const { tasks, lookup } = board([
      [1, undefined, 1],
      [2, 1, 1],
      [3, 2],
      [4, undefined, 0, 'completed'],
      [5, 4],
      [6, undefined, 3],
      [7, 6],
    ]);
    const above = new AncestorPriority(lookup);
    expect(above.of(tasks[2])).toEqual({ priority: 1, source: 2 });
    // A closed ancestor passes nothing down; a less urgent one does not lower the child.
    expect(above.of(tasks[4])).toBeUndefined();
    const ranks = readyOrder(tasks, lookup);
    expect(ranks.map((r) => r.id)).toEqual([3, 5, 7]);
    expect(ranks[0]).toMatchObject({ priority: 1, ownPriority: 2, fromParent: 2 });
    expect(explainRank(ranks[0])).toBe('P1 from parent #2 (own P2) · unblocks nothing · id 3');
    expect(ranks[2]).toMatchObject({ priority: 2, ownPriority: 2 });
    expect(ranks[2].fromParent).toBeUndefined();
  });

  it('from an ancestor further up, and through the work that waits for a child', () => {
    const { tasks, byId, lookup } = board([[1, undefined, 0], [2, 1], [3, 2], [4, undefined, 4], [5]]);
    byId.get(3)!.blockedBy = [4];
    byId.get(4)!.blocks = [3];
    const ranks = readyOrder(tasks, lookup);
    expect(ranks.map((r) => explainRank(r))).toEqual(['P0 through #3 (own P4) · unblocks 1 (#4 → #3) · id 4', 'P2 · unblocks nothing · id 5']);
    byId.get(3)!.blockedBy = [];
    byId.get(4)!.blocks = [];
    expect(explainRank(readyOrder(tasks, lookup)[0])).toBe('P0 from ancestor #1 (own P2) · unblocks nothing · id 3');
  });

  it('a cycle of parents made by hand is cut, not followed', () => {
    const { tasks, lookup } = board([
      [1, 2, 0],
      [2, 1, 1],
      [3, 1],
    ]);
    const above = new AncestorPriority(lookup);
    expect(above.of(tasks[2])).toEqual({ priority: 0, source: 1 });
    expect(above.of(tasks[0])).toEqual({ priority: 1, source: 2 });
  });
});

describe('what ancestors pass down, whatever order they are asked in', () => {
  /** The answer by its definition: up through open ancestors until a closed or missing one or a cycle; the most urgent set priority, the nearest on a tie. */
  function byDefinition(task: Task, byId: Map<number, Task>): { priority: number; source: number } | undefined {
    let best: { priority: number; source: number } | undefined;
    const seen = new Set([task.id]);
    for (
      let at = task.parent === undefined ? undefined : byId.get(task.parent);
      at && !seen.has(at.id) && at.status !== 'completed';
      at = at.parent === undefined ? undefined : byId.get(at.parent)
    ) {
      seen.add(at.id);
      if (at.priority !== undefined && (!best || at.priority < best.priority)) best = { priority: at.priority, source: at.id };
    }
    return best;
  }

  it('gives the definition’s answer for every task, asked first to last, last to first, or shuffled', () => {
    let seed = 5;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let trial = 0; trial < 300; trial++) {
      const n = 1 + Math.floor(random() * 30);
      const tasks: Task[] = [];
      for (let id = 1; id <= n; id++) {
        const task = {
          id,
          subject: `#${id}`,
          description: '',
          status: random() < 0.15 ? 'completed' : 'pending',
          owner: '',
          blockedBy: [],
          blocks: [],
          extra: {},
        } as Task;
        if (random() < 0.4) task.priority = Math.floor(random() * 5);
        // A lower id, now and then its own id or one that is missing (no longer cycles: where one is entered decides its answers).
        const odd = random();
        if (random() < 0.7) task.parent = odd < 0.05 ? id : odd < 0.1 ? n + 1 : id > 1 ? 1 + Math.floor(random() * (id - 1)) : undefined;
        tasks.push(task);
      }
      const byId = new Map(tasks.map((t) => [t.id, t]));
      const want = tasks.map((t) => byDefinition(t, byId));
      const orders = [tasks, [...tasks].reverse(), [...tasks].sort(() => random() - 0.5)];
      for (const order of orders) {
        const above = new AncestorPriority((id) => byId.get(id));
        const got = new Map(order.map((t) => [t.id, above.of(t)]));
        expect(tasks.map((t) => got.get(t.id))).toEqual(want);
      }
    }
  });
});

import { describe, expect, it } from 'vitest';
import { findCycle, isReady, openBlockers } from './graph.js';
import { buildGraph } from './graph-render.js';
import type { Task, TaskStatus } from '../format/format.js';

function board(edges: [number, number][], statuses: Record<number, TaskStatus> = {}): Map<number, Task> {
  const ids = new Set(edges.flat());
  const map = new Map<number, Task>();
  for (const id of ids)
    map.set(id, { id, subject: `t${id}`, description: '', status: statuses[id] ?? 'pending', owner: '', blockedBy: [], blocks: [], extra: {} });
  for (const [from, to] of edges) {
    map.get(from)!.blocks.push(to);
    map.get(to)!.blockedBy.push(from);
  }
  return map;
}

describe('findCycle', () => {
  it('spells a transitive cycle in blocks order', () => {
    const b = board([
      [1, 3],
      [3, 2],
    ]);
    expect(findCycle(2, 1, (id) => b.get(id))).toEqual([2, 1, 3, 2]);
  });

  it('refuses self-edges', () => {
    expect(findCycle(4, 4, () => undefined)).toEqual([4, 4]);
  });

  it('allows an edge that closes no cycle (a diamond)', () => {
    const b = board([
      [1, 2],
      [1, 3],
      [2, 4],
    ]);
    expect(findCycle(3, 4, (id) => b.get(id))).toBeUndefined();
  });

  it('ignores paths through deleted tasks', () => {
    const b = board(
      [
        [1, 2],
        [2, 3],
      ],
      { 2: 'deleted' },
    );
    expect(findCycle(3, 1, (id) => b.get(id))).toBeUndefined();
  });
});

describe('readiness', () => {
  it('is pending, unowned and every blocker completed or deleted', () => {
    const b = board(
      [
        [1, 3],
        [2, 3],
      ],
      { 1: 'completed', 2: 'deleted' },
    );
    expect(isReady(b.get(3)!, (id) => b.get(id))).toBe(true);
    b.get(3)!.owner = 'x';
    expect(isReady(b.get(3)!, (id) => b.get(id))).toBe(false);
    expect(isReady(b.get(3)!, (id) => b.get(id), 'x')).toBe(true);
  });

  it('counts a missing blocker as open', () => {
    const b = board([[1, 2]]);
    b.delete(1);
    expect(openBlockers(b.get(2)!, (id) => b.get(id))).toEqual([1]);
  });
});

describe('buildGraph', () => {
  it('draws each edge once, named on both sides, on one side only, or twice on a side, and marks the critical path', () => {
    const b = board([
      [1, 2],
      [2, 3],
    ]);
    b.get(1)!.blocks.push(2); // 1 → 2 named twice in #1's file
    b.set(4, { id: 4, subject: 't4', description: '', status: 'pending', owner: '', blockedBy: [3], blocks: [], extra: {} }); // 3 → 4 in #4's file alone
    b.get(3)!.related = [1];
    b.get(1)!.related = [3]; // one related link, named on both sides
    const model = buildGraph([...b.values()]);
    expect(model.edges).toEqual([
      { from: 1, to: 2, critical: true },
      { from: 2, to: 3, critical: true },
      { from: 3, to: 4, critical: true },
    ]);
    expect(model.criticalPath).toEqual([1, 2, 3, 4]);
    expect(model.links).toEqual([{ from: 1, to: 3, type: 'related' }]);
  });
});

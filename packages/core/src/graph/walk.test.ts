import { describe, expect, it } from 'vitest';
import { searchPath, walkDepthFirst } from './walk.js';

const graph = (edges: [number, number][]) => {
  const next = new Map<number, number[]>();
  for (const [a, b] of edges) next.set(a, [...(next.get(a) ?? []), b]);
  return (id: number) => next.get(id) ?? [];
};

describe('searchPath', () => {
  const next = graph([
    [1, 2],
    [2, 3],
    [3, 4],
    [1, 4],
  ]);

  it('finds a shortest path breadth first, and some path depth first', () => {
    expect(searchPath(1, 4, { frontier: 'queue', next })).toEqual([1, 4]);
    expect(searchPath(1, 4, { frontier: 'stack', next })).toEqual([1, 4]);
    expect(searchPath(2, 4, { frontier: 'stack', next })).toEqual([2, 3, 4]);
    expect(searchPath(4, 1, { frontier: 'queue', next })).toBeUndefined();
    expect(searchPath(3, 3, { frontier: 'queue', next })).toEqual([3]);
  });

  it('takes a test for a target, and does not go on from what expand refuses', () => {
    expect(searchPath(1, (id) => id > 2, { frontier: 'queue', next })).toEqual([1, 4]);
    expect(searchPath(1, 3, { frontier: 'queue', next, expand: (id) => id !== 2 })).toBeUndefined();
  });

  it('walks a 100,000-task chain without the call stack', () => {
    const n = 100_000;
    expect(searchPath(1, n, { frontier: 'stack', next: (id) => (id < n ? [id + 1] : []) })?.length).toBe(n);
  });
});

describe('walkDepthFirst', () => {
  it('reports enter, revisit and leave in the order of a recursive walk', () => {
    const log: string[] = [];
    const next = graph([
      [1, 2],
      [1, 3],
      [2, 3],
      [3, 1],
    ]);
    walkDepthFirst(1, {
      next,
      enter: (id, edge) => void log.push(`enter ${id}${edge ? ` from ${edge.from} (${edge.index + 1}/${edge.count}, depth ${edge.depth})` : ''}`),
      revisit: (id, edge) => void log.push(`revisit ${id} from ${edge.from}`),
      leave: (id, parent) => void log.push(`leave ${id}${parent === undefined ? '' : ` to ${parent}`}`),
    });
    expect(log).toEqual([
      'enter 1',
      'enter 2 from 1 (1/2, depth 1)',
      'enter 3 from 2 (1/1, depth 2)',
      'revisit 1 from 3',
      'leave 3 to 2',
      'leave 2 to 1',
      'revisit 3 from 1',
      'leave 1',
    ]);
  });

  it('leaves a task it was told not to enter unvisited, and shares visits between walks', () => {
    const visited = new Set<number>();
    const entered: number[] = [];
    const next = graph([
      [1, 2],
      [3, 2],
    ]);
    walkDepthFirst(1, { next, enter: (id) => (entered.push(id), id !== 2) }, visited);
    walkDepthFirst(3, { next, enter: (id) => void entered.push(id) }, visited);
    walkDepthFirst(1, { next, enter: (id) => void entered.push(id) }, visited);
    expect(entered).toEqual([1, 2, 3, 2]);
  });
});

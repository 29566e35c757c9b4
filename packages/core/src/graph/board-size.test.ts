// Whole-board algorithms on a 300,000-task board: nothing spreads a
// board-sized array into one call (`Math.min(...ids)`, `push(...lines)`)
// and nothing recurses once per task, so the size of a board is never a
// stack overflow (docs/decisions.md, "A board of any size fits the stack").
import { describe, expect, it } from 'vitest';
import { BoardGraph, rotateCycle } from '../consistency/board-graph.js';
import type { Task } from '../format/format.js';
import { mergeHighWaterMark } from '../git/merge.js';
import { buildGraph, renderGraph } from './graph-render.js';
import { parentCycles } from './hierarchy.js';

const N = 300_000;

function task(id: number, fields: Partial<Task> = {}): Task {
  return { id, subject: `Step ${id}`, description: '', status: 'pending', owner: '', blockedBy: [], blocks: [], extra: {}, ...fields };
}

/** `N` tasks, each waiting for the one before; with `ring`, #1 waits for the last, so the chain is one cycle. */
function chain({ ring = false, related = false } = {}): Task[] {
  const tasks: Task[] = [];
  for (let id = 1; id <= N; id++) {
    const before = id > 1 ? id - 1 : ring ? N : undefined;
    const after = id < N ? id + 1 : ring ? 1 : undefined;
    tasks.push(
      task(id, {
        blockedBy: before === undefined ? [] : [before],
        blocks: after === undefined ? [] : [after],
        ...(related ? { related: [id - 1, id + 1].filter((r) => r >= 1 && r <= N) } : {}),
      }),
    );
  }
  return tasks;
}

describe(`a board of ${N.toLocaleString('en')} tasks`, () => {
  it('a cycle through every task is found and spelled from its lowest id', () => {
    const ring = Array.from({ length: N }, (_, i) => ((i + 7) % N) + 1);
    const rotated = rotateCycle([...ring, ring[0]]);
    expect(rotated[0]).toBe(1);
    expect(rotated.length).toBe(N + 1);
    const cycles = BoardGraph.fromTasks(chain({ ring: true })).cycles();
    expect(cycles.length).toBe(1);
    expect(cycles[0].length).toBe(N + 1);
    expect(cycles[0].slice(0, 3)).toEqual([1, 2, 3]);
  });

  it('a cycle of parents through every task is found', () => {
    const tasks = Array.from({ length: N }, (_, i) => task(i + 1, { parent: i > 0 ? i : N }));
    const cycles = parentCycles(tasks);
    expect(cycles.length).toBe(1);
    expect(cycles[0].length).toBe(N + 1);
    expect(cycles[0].slice(0, 2)).toEqual([1, N]);
  });

  it('the graph of a chain with a related link along it renders in every format', () => {
    const model = buildGraph(chain({ related: true }));
    expect(model.links.length).toBe(N - 1);
    expect(model.criticalPath.length).toBe(N);
    for (const format of ['mermaid', 'dot', 'text'] as const) {
      const out = renderGraph(model, format);
      expect(out).toContain(format === 'text' ? `#${N - 1} ~ #${N} related` : `t${N - 1} -`);
    }
  });

  it('a .highwatermark holding a number per task still merges to the highest', () => {
    const many = Array.from({ length: N }, (_, i) => String(i + 1)).join('\n');
    expect(mergeHighWaterMark('7\n', many, '12\n')).toBe(`${N}\n`);
  });
});

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BoardGraph, checkBoard, checkChangedTask, type BoardFinding } from './reconcile.js';
import { applyFinding } from './repair.js';
import { TaskStore } from '../store.js';

interface Spec {
  status?: string;
  blockedBy?: number[];
  blocks?: number[];
}

describe('reconcile', () => {
  let dir = '';
  // The board is `<temp>/.tasks`: remove the temp folder around it.
  afterEach(() => rmSync(dirname(dir), { recursive: true, force: true }));

  /** A board whose files say exactly what `specs` say (by hand, no commands). */
  function board(specs: Record<number, Spec>): TaskStore {
    dir = join(mkdtempSync(join(tmpdir(), 'dotasks-reconcile-')), '.tasks');
    const store = TaskStore.init(dir);
    for (const [id, spec] of Object.entries(specs)) write(store, Number(id), spec);
    return store;
  }

  function write(store: TaskStore, id: number, spec: Spec): void {
    const task = {
      id,
      subject: `Task ${id}`,
      description: '',
      status: spec.status ?? 'pending',
      owner: '',
      blockedBy: spec.blockedBy ?? [],
      blocks: spec.blocks ?? [],
    };
    writeFileSync(store.taskPath(id), JSON.stringify(task, null, 2));
  }

  const kinds = (findings: BoardFinding[]) => findings.map((f) => f.kind);

  it('finds nothing on a consistent board', () => {
    const store = board({ 1: { status: 'completed', blocks: [2] }, 2: { blocks: [3] }, 3: { blockedBy: [2] } });
    expect(checkBoard(store).findings).toEqual([]);
  });

  it('writes the missing side of a one-sided edge, once', async () => {
    const store = board({ 1: {}, 2: { blockedBy: [1] }, 3: { blocks: [1] } });
    const { findings, graph } = checkBoard(store);
    expect(findings).toEqual([
      { kind: 'add-side', blocker: 1, waiter: 2, task: 1, field: 'blocks' },
      { kind: 'add-side', blocker: 3, waiter: 1, task: 1, field: 'blockedBy' },
    ]);
    const events = [];
    for (const f of findings) events.push(...(await applyFinding(store, f, { actor: 'test', graph })));
    expect(events.map((e) => [e.type, e.task, e.field, e.added])).toEqual([
      ['repaired', 1, 'blocks', 2],
      ['repaired', 1, 'blockedBy', 3],
    ]);
    expect(store.getTask(1)).toMatchObject({ blocks: [2], blockedBy: [3] });
    const before = readFileSync(store.taskPath(1), 'utf8');
    for (const f of findings) expect(await applyFinding(store, f, { graph })).toEqual([]);
    expect(readFileSync(store.taskPath(1), 'utf8')).toBe(before);
    expect(checkBoard(store).findings).toEqual([]);
  });

  it('propagates a completion made by hand, and a hand-linked completed blocker', async () => {
    const store = board({ 1: { status: 'completed', blocks: [2] }, 2: { blockedBy: [1, 3] }, 3: { status: 'completed' } });
    const { findings, graph } = checkBoard(store);
    expect(kinds(findings)).toEqual(['propagate', 'add-side']);
    const events = [];
    for (const f of findings) events.push(...(await applyFinding(store, f, { graph })));
    expect(events.map((e) => e.type)).toEqual(['repaired', 'unblocked']);
    expect(store.getTask(2).blockedBy).toEqual([]);
    expect(store.getTask(3).blocks).toEqual([2]);
    expect(checkBoard(store).findings).toEqual([]);
  });

  it('reports what it must not fix: cycles, missing and deleted tasks, bad files', () => {
    const store = board({
      1: { blockedBy: [2], blocks: [2] },
      2: { blockedBy: [1] },
      3: { blockedBy: [9] },
      4: { blockedBy: [5] },
      5: { status: 'deleted' },
      6: { blockedBy: [7], blocks: [7] },
      7: { blockedBy: [6], blocks: [6] },
    });
    writeFileSync(store.taskPath(8), '{ "id": 8, ');
    const invalid = checkBoard(store).findings.filter((f) => f.kind === 'invalid');
    expect(invalid.map((f) => [f.kind === 'invalid' && f.file, f.kind === 'invalid' && f.problem.replace(/;.*/, '')])).toEqual([
      ['task_8.json', expect.stringContaining('invalid JSON')],
      ['task_1.json', '"blockedBy" names #2, which closes the cycle #1 -> #2 -> #1'],
      ['task_3.json', '"blockedBy" names #9, which does not exist'],
      ['task_4.json', '"blockedBy" names #5, which is deleted'],
      ['task_6.json', 'dependency cycle #6 -> #7 -> #6'],
    ]);
    // Nothing fixable there: the one-sided edge #2 -> #1 lies on the cycle.
    expect(checkBoard(store).findings.filter((f) => f.kind !== 'invalid')).toEqual([]);
  });

  it('mirrors a side removed by hand instead of writing it back', () => {
    const store = board({ 1: { blocks: [2] }, 2: { blockedBy: [1] } });
    const first = checkBoard(store);
    const earlier = checkBoard(store).graph;
    write(store, 2, {});
    expect(checkChangedTask(store, first.graph, 2)).toEqual([{ kind: 'remove-side', blocker: 1, waiter: 2, task: 1, field: 'blocks' }]);
    // The same judgement from a full check that knows the previous graph; without it, the edge is taken as new.
    expect(checkBoard(store, { previous: earlier }).findings).toEqual([{ kind: 'remove-side', blocker: 1, waiter: 2, task: 1, field: 'blocks' }]);
    expect(checkBoard(store).findings).toEqual([{ kind: 'add-side', blocker: 1, waiter: 2, task: 2, field: 'blockedBy' }]);
  });

  it('refuses a repair that would close a cycle even when the check missed it', async () => {
    const store = board({ 1: { blocks: [2] }, 2: { blockedBy: [1], blocks: [3] }, 3: { blockedBy: [2] } });
    const { graph } = checkBoard(store);
    write(store, 1, { blocks: [2], blockedBy: [3] });
    graph.set(1, { status: 'pending', blockedBy: [3], blocks: [2] });
    await expect(applyFinding(store, { kind: 'add-side', blocker: 3, waiter: 1, task: 3, field: 'blocks' }, { graph })).rejects.toMatchObject({
      code: 'E_CYCLE',
    });
    expect(store.getTask(3).blocks).toEqual([]);
  });

  it('finds cycles in a 10,000-task chain without deep recursion', () => {
    const graph = new BoardGraph();
    for (let i = 1; i <= 10_000; i++) graph.set(i, { status: 'pending', blockedBy: i > 1 ? [i - 1] : [], blocks: i < 10_000 ? [i + 1] : [] });
    expect(graph.cyclicComponents()).toEqual([]);
    graph.set(1, { status: 'pending', blockedBy: [10_000], blocks: [2] });
    const [component] = graph.cyclicComponents();
    expect(component).toHaveLength(10_000);
    expect(graph.findPath(2, 1)).toHaveLength(10_000);
  });
});

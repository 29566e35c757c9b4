import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkBoard, checkChangedTask } from './reconcile.js';
import { applyFinding } from './repair.js';
import { TaskStore } from '../store.js';

// The watcher's judgement of soft links (docs/protocol.md, "Links") on boards written by hand.
interface Spec {
  status?: string;
  related?: number[];
  discoveredFrom?: number[];
  discovered?: number[];
}

describe('reconcile: soft links', () => {
  let dir = '';
  afterEach(() => rmSync(dirname(dir), { recursive: true, force: true }));

  function board(specs: Record<number, Spec>): TaskStore {
    dir = join(mkdtempSync(join(tmpdir(), 'dotasks-links-')), '.tasks');
    const store = TaskStore.init(dir);
    for (const [id, spec] of Object.entries(specs)) write(store, Number(id), spec);
    return store;
  }

  function write(store: TaskStore, id: number, spec: Spec): void {
    const { status = 'pending', ...links } = spec;
    writeFileSync(
      store.taskPath(id),
      JSON.stringify({ id, subject: `Task ${id}`, description: '', status, owner: '', blockedBy: [], blocks: [], ...links }, null, 2),
    );
  }

  it('finds nothing on a board whose links are on both sides, a deleted task keeping its own as history', () => {
    const store = board({ 1: { related: [2], discovered: [3] }, 2: { related: [1] }, 3: { discoveredFrom: [1] }, 4: { status: 'deleted', related: [1] } });
    expect(checkBoard(store).findings).toEqual([]);
  });

  it('writes the missing side of a link written by hand on one side, once', async () => {
    const store = board({ 1: { related: [2] }, 2: {}, 3: { discoveredFrom: [1] } });
    const { findings, graph } = checkBoard(store);
    expect(findings).toEqual([
      { kind: 'link-side', change: 'add', task: 2, field: 'related', other: 1 },
      { kind: 'link-side', change: 'add', task: 1, field: 'discovered', other: 3 },
    ]);
    const events = [];
    for (const f of findings) events.push(...(await applyFinding(store, f, { actor: 'test', graph })));
    expect(events.map((e) => [e.type, e.task, e.field, e.added, e.source])).toEqual([
      ['repaired', 2, 'related', 1, 'task_1.json'],
      ['repaired', 1, 'discovered', 3, 'task_3.json'],
    ]);
    expect(store.getTask(1)).toMatchObject({ related: [2], discovered: [3] });
    expect(store.getTask(2)).toMatchObject({ related: [1] });
    // Settled: applying the same findings again writes nothing.
    const before = readFileSync(store.taskPath(1), 'utf8');
    for (const f of findings) expect(await applyFinding(store, f, { graph })).toEqual([]);
    expect(readFileSync(store.taskPath(1), 'utf8')).toBe(before);
    expect(checkBoard(store).findings).toEqual([]);
  });

  it('follows one changed file: a side added by hand gets its other side, a side removed by hand is mirrored', async () => {
    const store = board({ 1: { related: [3] }, 2: {}, 3: { related: [1] } });
    const { graph } = checkBoard(store);
    write(store, 2, { discoveredFrom: [1] });
    const added = checkChangedTask(store, graph, 2);
    expect(added).toEqual([{ kind: 'link-side', change: 'add', task: 1, field: 'discovered', other: 2 }]);
    await applyFinding(store, added[0], { graph });
    expect(store.getTask(1)).toMatchObject({ related: [3], discovered: [2] });
    write(store, 3, {});
    expect(checkChangedTask(store, graph, 3)).toEqual([{ kind: 'link-side', change: 'remove', task: 1, field: 'related', other: 3 }]);
    // Without the earlier look, a full check takes #1's side as the one being added.
    expect(checkBoard(store).findings).toEqual([{ kind: 'link-side', change: 'add', task: 3, field: 'related', other: 1 }]);
  });

  it('drops a task deleted by hand from the live side, and reports links to missing or deleted tasks and to the task itself', async () => {
    const store = board({
      1: { related: [2] },
      2: { status: 'deleted', related: [1] },
      3: { related: [9] },
      4: { discoveredFrom: [5] },
      5: { status: 'deleted' },
      6: { related: [6] },
    });
    const { findings, graph } = checkBoard(store);
    expect(findings.filter((f) => f.kind !== 'invalid')).toEqual([{ kind: 'link-side', change: 'remove', task: 1, field: 'related', other: 2 }]);
    expect(findings.flatMap((f) => (f.kind === 'invalid' ? [[f.file, f.problem]] : []))).toEqual([
      ['task_3.json', '"related" names #9, which does not exist (remove it: tasks update 3 --remove-related 9)'],
      [
        'task_4.json',
        '"discoveredFrom" names #5, which is deleted; a link may only name a task that is not deleted (remove it: tasks update 4 --remove-discovered-from 5)',
      ],
      ['task_6.json', '#6 names itself in "related"; a task cannot be linked to itself (remove it: tasks update 6 --remove-related 6)'],
    ]);
    await applyFinding(store, findings[0], { graph });
    expect(store.getTask(1).related).toBeUndefined();
    expect(store.getTask(2).related).toEqual([1]);
  });

  it('reports the links to a task whose file is gone', () => {
    const store = board({ 1: { related: [2] }, 2: { related: [1] } });
    const { graph } = checkBoard(store);
    rmSync(store.taskPath(2));
    expect(checkChangedTask(store, graph, 2)).toEqual([
      { kind: 'invalid', file: 'task_1.json', task: 1, problem: '"related" names #2, which does not exist (remove it: tasks update 1 --remove-related 2)' },
    ]);
  });
});

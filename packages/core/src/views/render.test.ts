import { describe, expect, it } from 'vitest';
import { renderBoard } from './render.js';
import { toTaskView } from './task-view.js';
import type { BoardSnapshot } from '../store.js';
import type { Task } from '../format/format.js';

function snapshot(tasks: Partial<Task>[]): BoardSnapshot {
  const full = tasks.map((t) => ({ description: '', status: 'pending', owner: '', blockedBy: [], blocks: [], extra: {}, ...t }) as Task);
  return { tasks: full, byId: new Map(full.map((t) => [t.id, t])), problems: [] };
}

const seed = snapshot([
  { id: 1, subject: 'Parse AST', status: 'completed', blocks: [2, 3] },
  { id: 2, subject: 'Transform AST', status: 'in_progress', owner: 'agent-1', activeForm: 'transforming', blocks: [4] },
  { id: 3, subject: 'Emit output', blocks: [4] },
  { id: 4, subject: 'Run tests', blockedBy: [2, 3] },
  { id: 5, subject: 'Old idea', status: 'deleted' },
]);

describe('renderBoard', () => {
  it('prints the example board as docs/protocol.md ("Output") shows it, ready tasks at a glance', () => {
    expect(renderBoard(seed)).toMatchInlineSnapshot(`
      "[x] #1: Parse AST
      [>] #2: Transform AST (agent-1: transforming)
      [ ] #3: Emit output
      [ ] #4: Run tests (blocked by: #2, #3)
      1/4 done · 1 in progress · ready: #3 · 1 blocked"
    `);
  });

  it('shows deleted tasks with --all and reports bad files', () => {
    const s = { ...seed, problems: [{ file: '/b/task_9.json', id: 9, line: 2, column: 5, message: 'invalid JSON' }] };
    const text = renderBoard(s, { all: true });
    expect(text).toContain('[-] #5: Old idea (deleted)');
    expect(text).toContain('! /b/task_9.json:2:5: invalid JSON');
  });

  it('gives the documented JSON view', () => {
    expect(toTaskView(seed.tasks[3], (id) => seed.byId.get(id))).toEqual({
      id: 4,
      subject: 'Run tests',
      description: '',
      status: 'pending',
      owner: '',
      activeForm: null,
      blockedBy: [2, 3],
      blocks: [],
      metadata: {},
      ready: false,
      openBlockers: [2, 3],
      priority: 2,
      labels: [],
      notes: [],
    });
  });

  it("gives every field of a full task in the documented order, copies that do not touch the task's own", () => {
    const task: Task = {
      ...seed.tasks[3]!,
      activeForm: 'Running tests',
      parent: 1,
      paths: ['src/**'],
      related: [3, 2],
      discoveredFrom: [1],
      discovered: [5],
      metadata: { points: 3 },
      priority: 0,
      labels: ['ci'],
      notes: [{ at: '2026-12-01T00:00:00.000Z', owner: 'ann', text: 'flaky' }],
      verify: 'npm test',
      result: 'green',
      review: { state: 'waiting', since: '2026-12-02T00:00:00.000Z' },
    };
    const view = toTaskView(task, (id) => seed.byId.get(id));
    // The order --json and export print them in (docs/protocol.md): a change here changes every reader's diff.
    expect(Object.keys(view)).toEqual([
      'id',
      'subject',
      'description',
      'status',
      'owner',
      'activeForm',
      'parent',
      'blockedBy',
      'blocks',
      'paths',
      'related',
      'discoveredFrom',
      'discovered',
      'metadata',
      'ready',
      'openBlockers',
      'priority',
      'labels',
      'notes',
      'verify',
      'result',
      'review',
    ]);
    expect(view).toMatchObject({ related: [2, 3], priority: 0, notes: [{ text: 'flaky' }], review: { state: 'waiting' } });
    view.blockedBy.push(9);
    view.paths!.push('x');
    view.labels.push('x');
    (view.metadata as { points: number }).points = 5;
    view.notes[0]!.text = 'changed';
    view.review!.state = 'approved';
    expect(task).toMatchObject({
      blockedBy: [2, 3],
      paths: ['src/**'],
      labels: ['ci'],
      metadata: { points: 3 },
      notes: [{ text: 'flaky' }],
      review: { state: 'waiting' },
    });
  });
});

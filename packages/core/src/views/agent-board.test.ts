import { describe, expect, it } from 'vitest';
import { renderAgentBoard } from './agent-board.js';
import { readyOrder } from '../graph/ready-order.js';
import type { BoardSnapshot } from '../store.js';
import type { Task } from '../format/format.js';

function snapshot(tasks: Partial<Task>[]): BoardSnapshot {
  const full = tasks.map((t) => ({ description: '', status: 'pending', owner: '', blockedBy: [], blocks: [], extra: {}, ...t }) as Task);
  return { tasks: full, byId: new Map(full.map((t) => [t.id, t])), problems: [] };
}

/** A long-lived board: `n` tasks, 90% of them done, the open rest in chains of three with a few in progress. */
function history(n: number): BoardSnapshot {
  const tasks: Partial<Task>[] = [];
  const done = Math.floor(n * 0.9);
  for (let id = 1; id <= n; id++) {
    if (id <= done) {
      tasks.push({ id, subject: `Finished step ${id} of the migration`, status: 'completed' });
      continue;
    }
    const k = id - done;
    const task: Partial<Task> = { id, subject: `Open step ${id} of the migration`, priority: k % 5 };
    if (k % 3 !== 1) task.blockedBy = [id - 1];
    if (k % 3 !== 0 && id < n) task.blocks = [id + 1];
    if (k % 97 === 1) Object.assign(task, { status: 'in_progress', owner: `agent-${k % 4}`, activeForm: 'working' });
    tasks.push(task);
  }
  return snapshot(tasks);
}

const shownIds = (text: string) => [...text.matchAll(/^\[[ >]\] #(\d+):/gm)].map((m) => Number(m[1]));

describe('renderAgentBoard', () => {
  it('lists the open work in full and folds the history into one line', () => {
    const board = snapshot([
      { id: 1, subject: 'Parse AST', status: 'completed', blocks: [2, 3] },
      { id: 2, subject: 'Transform AST', status: 'in_progress', owner: 'agent-1', activeForm: 'transforming', blocks: [4] },
      { id: 3, subject: 'Emit output', blocks: [4] },
      { id: 4, subject: 'Run tests', blockedBy: [2, 3] },
      { id: 5, subject: 'Old idea', status: 'deleted' },
    ]);
    expect(renderAgentBoard(board)).toMatchInlineSnapshot(`
      "<TASK_BOARD>
      [>] #2: Transform AST (agent-1: transforming)
      [ ] #3: Emit output
      [ ] #4: Run tests (blocked by: #2, #3)
      (1 completed task and 1 deleted task not shown: list returns every task, get shows one)
      1/4 done · 1 in progress · ready: #3 · 1 blocked
      </TASK_BOARD>"
    `);
  });

  it('keeps 10,000 tasks with 9,000 done under the budget, every open task named or counted, the most urgent named', () => {
    const board = history(10_000);
    const text = renderAgentBoard(board);
    expect(text.length).toBeLessThanOrEqual(4000);
    const shown = shownIds(text);
    const folded = Number(/\(… (\d+) more open tasks? not shown/.exec(text)?.[1]);
    expect(shown.length).toBeGreaterThan(10);
    expect(shown.length + folded).toBe(1000);
    expect(text).toContain('(9000 completed tasks not shown');
    // Every task in progress is named, and the ready ones named are the first of the claim order.
    const open = board.tasks.filter((t) => t.status !== 'completed');
    for (const t of open.filter((t) => t.status === 'in_progress')) expect(shown).toContain(t.id);
    const order = readyOrder(open, (id) => board.byId.get(id)).map((r) => r.id);
    const readyShown = order.filter((id) => shown.includes(id));
    expect(readyShown).toEqual(order.slice(0, readyShown.length));
    expect(readyShown.length).toBeGreaterThan(0);
    // Same board, same bytes.
    expect(renderAgentBoard(history(10_000))).toBe(text);
  });

  it('holds a budget given in the options, and shows all of a board that fits', () => {
    const board = history(300);
    expect(renderAgentBoard(board, { budget: 800 }).length).toBeLessThanOrEqual(800);
    const roomy = renderAgentBoard(board, { budget: 100_000 });
    expect(shownIds(roomy)).toHaveLength(30);
    expect(roomy).not.toContain('more open task');
  });

  it('counts bad files past five', () => {
    const board = history(20);
    board.problems = Array.from({ length: 8 }, (_, i) => ({ file: `/b/task_${90 + i}.json`, id: 90 + i, message: 'invalid JSON' }));
    const text = renderAgentBoard(board);
    expect(text.match(/^! \/b\//gm)).toHaveLength(5);
    expect(text).toContain("! and 3 more bad files ('tasks doctor' lists them)");
  });
});

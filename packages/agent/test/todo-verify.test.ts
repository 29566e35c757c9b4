import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TaskStore } from '@dotasks/core/internal';
import { createTodoTool, type TodoResult, type TodoTool } from '../src/index.js';

let root: string;
let store: TaskStore;
let tool: TodoTool;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-agent-verify-')));
  store = TaskStore.init(join(root, '.tasks'));
  tool = createTodoTool({ store, owner: 'agent-1' });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

async function call(input: Record<string, unknown>): Promise<TodoResult> {
  return tool.execute(input);
}

describe("the todo tool's completion runs the task's check before done (real shell commands)", () => {
  it('a failing check refuses the completion with the end of its output; the task stays in progress and the other fields are not written', async () => {
    await store.createTask({ subject: 'Parse AST', verify: 'echo "expected 3 got 4"; exit 1' });
    await store.createTask({ subject: 'Emit', blockedBy: [1] });
    await call({ action: 'claim', task_id: 1 });
    const r = await call({ action: 'update', task_id: 1, status: 'completed', description: 'done, I think', result: 'the parser' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatchObject({ code: 'E_VERIFY', task: 1, command: 'echo "expected 3 got 4"; exit 1', exitCode: 1, tail: 'expected 3 got 4' });
    expect(r.error.message).toMatch(/^the check of #1 failed \(exit 1\): echo "expected 3 got 4"; exit 1; #1 stays in progress/);
    expect(r.error.hint).toContain('Fix the work, then set status "completed" again');
    expect(r.board).toContain('[>] #1: Parse AST (agent-1)');
    const task = store.getTask(1);
    expect(task).toMatchObject({ status: 'in_progress', owner: 'agent-1', description: '' });
    expect(task).not.toHaveProperty('result');
    expect(task.notes?.map((n) => n.text)).toEqual(['the check failed (exit 1): echo "expected 3 got 4"; exit 1; its output ended:\nexpected 3 got 4']);
    expect(store.getTask(2).blockedBy).toEqual([1]);
  });

  it("a passing check (the board's) completes it with its result and the update's fields; the dependent's get shows the upstream results", async () => {
    writeFileSync(join(store.dir, 'config.json'), JSON.stringify({ verify: 'test -f ok' }));
    writeFileSync(join(root, 'ok'), '');
    const fresh = createTodoTool({ store: new TaskStore(store.dir), owner: 'agent-1' });
    await store.createTask({ subject: 'Parse AST' });
    await store.createTask({ subject: 'Lex' });
    await store.createTask({ subject: 'Emit', blockedBy: [1, 2] });
    await fresh.execute({ action: 'claim', task_id: 1 });
    const r = await fresh.execute({
      action: 'update',
      task_id: 1,
      status: 'completed',
      description: 'acorn, wrapped',
      result: 'parse(src) returns an AST (src/ast.ts)',
    });
    expect(r.ok, JSON.stringify(r)).toBe(true);
    expect(store.getTask(1)).toMatchObject({ status: 'completed', description: 'acorn, wrapped', result: 'parse(src) returns an AST (src/ast.ts)' });

    const get = await fresh.execute({ action: 'get', task_id: 3 });
    expect(get).toMatchObject({
      ok: true,
      message: '#3: Emit; upstream: #1 (result below), #2 (no result)',
      upstream: [
        { id: 1, subject: 'Parse AST', result: 'parse(src) returns an AST (src/ast.ts)' },
        { id: 2, subject: 'Lex', result: null },
      ],
    });
    const alone = await fresh.execute({ action: 'get', task_id: 2 });
    expect(alone).not.toHaveProperty('upstream');
  });

  it('write, one transaction, does not complete a task with a check: it names update, and nothing of the batch is written', async () => {
    await store.createTask({ subject: 'Checked', verify: 'true' });
    await store.createTask({ subject: 'Plain' });
    const r = await call({
      action: 'write',
      todos: [
        { task_id: 2, status: 'completed' },
        { task_id: 1, status: 'completed' },
      ],
    });
    expect(r).toMatchObject({
      ok: false,
      error: { code: 'E_INVALID', message: 'todos[1]: #1 has a check before done (true), which write does not run', index: 1 },
    });
    expect(store.getTask(2).status).toBe('pending');
    expect((await call({ action: 'write', todos: [{ task_id: 2, status: 'completed' }] })).ok).toBe(true);
  });

  it('a result is for a completion only', async () => {
    await store.createTask({ subject: 'Parse AST' });
    const r = await call({ action: 'update', task_id: 1, subject: 'Parse the AST', result: 'x' });
    expect(r).toMatchObject({ ok: false, error: { code: 'E_INVALID', message: 'result goes with status "completed"' } });
    expect(store.getTask(1).subject).toBe('Parse AST');
  });
});

import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { readTaskFile, tasks, tasksAsync, tempBoard } from '../helpers.js';

const taskFiles = (board: string) => readdirSync(board).filter((name) => /^task_\d+\.json$/.test(name));

describe('tasks create --key', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('run again with the same key prints the task it made, and writes nothing', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    expect(tasks(t.root, ['create', 'Parse AST', '--key', 'run-41']).stdout).toBe('created #1: Parse AST\n');
    const again = tasks(t.root, ['create', 'Parse AST', '--key', 'run-41', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ alreadyApplied: true, task: { id: 1, metadata: { createKey: 'run-41' } } });
    expect(tasks(t.root, ['create', 'Parse AST', '--key', 'run-41']).stdout).toBe('already created #1: Parse AST with this key; nothing changed\n');
    expect(taskFiles(t.board)).toEqual(['task_1.json']);
    expect(tasks(t.root, ['create', 'Parse AST', '--key', 'run-42']).stdout).toBe('created #2: Parse AST\n');
    const bad = tasks(t.root, ['create', 'Parse AST', '--key', 'two\nlines']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('a create key is one line of 1 to 200 characters');
    expect(taskFiles(t.board)).toEqual(['task_1.json', 'task_2.json']);
  });

  it('eight processes creating with one key at once make one task', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const runs = await Promise.all(Array.from({ length: 8 }, () => tasksAsync(t.root, ['create', 'Deploy', '--key', 'deploy-1', '--json'])));
    expect(runs.map((r) => r.code)).toEqual(Array(8).fill(0));
    const answers = runs.map((r) => JSON.parse(r.stdout) as { alreadyApplied?: boolean; task: { id: number } });
    expect(answers.filter((a) => !a.alreadyApplied)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.task.id))).toEqual(new Set([1]));
    expect(taskFiles(t.board)).toEqual(['task_1.json']);
    expect(readTaskFile(t.board, 1).metadata).toEqual({ createKey: 'deploy-1' });
  });
});

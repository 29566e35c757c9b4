import { afterEach, describe, expect, it } from 'vitest';
import { tasks, tempBoard } from '../helpers.js';

describe('tasks (smoke)', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('creates, lists and completes with propagation', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    expect(tasks(t.root, ['create', 'Parse AST']).code).toBe(0);
    expect(tasks(t.root, ['create', 'Transform AST', '--blocked-by', '1']).code).toBe(0);
    const done = tasks(t.root, ['done', '1']);
    expect(done.stdout).toContain('unblocked #2: Transform AST');
    expect(tasks(t.root, ['list']).stdout).toMatchInlineSnapshot(`
      "[x] #1: Parse AST
      [ ] #2: Transform AST
      1/2 done · ready: #2
      "
    `);
  });
});

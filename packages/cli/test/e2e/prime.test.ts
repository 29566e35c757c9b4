import { afterEach, describe, expect, it } from 'vitest';
import { tasks, tempBoard } from '../helpers.js';

describe('tasks prime', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('prints the protocol of the tool description, who the agent is, what it holds and the open board', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    tasks(t.root, ['create', 'Parse AST']);
    tasks(t.root, ['create', 'Transform AST', '--blocked-by', '1']);
    tasks(t.root, ['create', 'Write the README']);
    tasks(t.root, ['done', '3']);
    expect(tasks(t.root, ['claim', '--next'], { TASKS_OWNER: 'claude' }).code).toBe(0);
    const primed = tasks(t.root, ['prime'], { TASKS_OWNER: 'claude' });
    expect(primed.code).toBe(0);
    const description = JSON.parse(tasks(t.root, ['tool-schema']).stdout).description as string;
    const steps = description.split('\n').filter((line) => /^\d\. /.test(line));
    expect(steps).toHaveLength(4);
    for (const step of steps) expect(primed.stdout).toContain(step);
    expect(primed.stdout).toContain('never start, complete or edit a task another owner holds');
    expect(primed.stdout).toContain('You act as "claude". In progress for you: #1; finish or release it first.');
    expect(primed.stdout).toContain(
      '<TASK_BOARD>\n[>] #1: Parse AST (claude)\n[ ] #2: Transform AST (blocked by: #1)\n(1 completed task not shown: list returns every task, get shows one)\n',
    );
    expect(primed.stdout.length).toBeLessThan(2500);
    const json = JSON.parse(tasks(t.root, ['prime', '--json'], { TASKS_OWNER: 'codex' }).stdout);
    expect(json).toMatchObject({ owner: 'codex', holding: [], board: expect.stringMatching(/^<TASK_BOARD>\n[\s\S]*<\/TASK_BOARD>$/) });
    expect(json.text).toContain('You act as "codex". You hold no task now.');
  });

  it('shows a hostile subject escaped, and outside a board fails with one line', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    tasks(t.root, ['create', 'Title \u001b]2;owned\u0007 here']);
    const primed = tasks(t.root, ['prime']);
    expect(primed.stdout).not.toContain('\u001b');
    expect(primed.stdout).toContain('#1: Title \\x1b]2;owned\\x07 here');
    const none = tempBoard({ init: false });
    const outside = tasks(none.root, ['prime']);
    none.cleanup();
    expect(outside.code).toBe(1);
    expect(outside.stderr.trim().split('\n')).toHaveLength(1);
    expect(outside.stderr).toContain('tasks init');
  });
});

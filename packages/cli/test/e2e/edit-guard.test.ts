import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, tasks, tempBoard } from '../helpers.js';
import { git, tempRepo } from '../agents-helpers.js';

/** Claude Code's PreToolUse payload for an editing tool, as its hooks reference documents it (file paths absolute). */
const preToolUse = (cwd: string, tool: string, input: Record<string, unknown>) =>
  JSON.stringify({
    session_id: 's-1',
    transcript_path: '/tmp/t.jsonl',
    cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: tool,
    tool_input: input,
    tool_use_id: 'toolu_01',
  });

describe('tasks guard --hook claude-edit (a Claude Code PreToolUse hook)', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  function scopedBoard() {
    const t = tempBoard();
    cleanup = t.cleanup;
    spawnSync('git', ['init', '-q'], { cwd: t.root });
    tasks(t.root, ['create', 'Parser', '--path', 'src/parser/**', '--path', 'docs/parser.md']);
    tasks(t.root, ['create', 'Docs site']);
    return t;
  }
  const hook = (root: string, payload: string, owner = 'claude') => tasks(root, ['guard', '--hook', 'claude-edit', '--owner', owner], {}, payload);
  const decision = (stdout: string) => (stdout ? JSON.parse(stdout).hookSpecificOutput : undefined);

  it('lets edits inside the claimed task scope through and refuses the rest with a reason the model can act on', () => {
    const t = scopedBoard();
    expect(tasks(t.root, ['claim', '1'], { TASKS_OWNER: 'claude' }).code).toBe(0);
    for (const [tool, input] of [
      ['Edit', { file_path: join(t.root, 'src/parser/lexer.ts'), old_string: 'a', new_string: 'b' }],
      ['Write', { file_path: join(t.root, 'src/parser/new/deep.ts'), content: 'x' }],
      ['MultiEdit', { file_path: join(t.root, 'docs/parser.md'), edits: [{ old_string: 'a', new_string: 'b' }] }],
    ] as const) {
      const r = hook(t.root, preToolUse(t.root, tool, input));
      expect(r, tool).toMatchObject({ code: 0, stdout: '' });
    }
    // A path relative to the payload's cwd counts the same.
    mkdirSync(join(t.root, 'src'));
    expect(hook(join(t.root, 'src'), preToolUse(join(t.root, 'src'), 'Edit', { file_path: 'parser/x.ts' })).stdout).toBe('');
    const refused = hook(t.root, preToolUse(t.root, 'Write', { file_path: join(t.root, 'src/cli.ts'), content: 'x' }));
    expect(refused.code).toBe(0);
    const out = decision(refused.stdout);
    expect(out).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'deny' });
    expect(out.permissionDecisionReason).toContain(
      'src/cli.ts is outside the file scope of the task you are working on: #1 (Parser) is scoped to src/parser/**, docs/parser.md.',
    );
    expect(out.permissionDecisionReason).toMatch(/update 1 --path src\/cli\.ts --owner claude`/);
    // Tools that do not edit, and files outside the repository, are not the guard's.
    expect(hook(t.root, preToolUse(t.root, 'Read', { file_path: join(t.root, 'src/cli.ts') })).stdout).toBe('');
    expect(hook(t.root, preToolUse(t.root, 'Write', { file_path: '/dev/null/elsewhere.txt', content: '' })).stdout).toBe('');
  });

  it("judges the board's repository only: a file of another repository passes, one of a linked worktree is held", () => {
    const t = scopedBoard();
    expect(tasks(t.root, ['claim', '1'], { TASKS_OWNER: 'claude' }).code).toBe(0);
    // Another repository (here inside the board's folder, as a checkout of a dependency would be): outside every scope's reach.
    const other = join(t.root, 'vendor', 'other-repo');
    mkdirSync(other, { recursive: true });
    git(other, ['init', '-q']);
    expect(hook(t.root, preToolUse(t.root, 'Edit', { file_path: join(other, 'README.md') }))).toMatchObject({ code: 0, stdout: '' });
    // The same name in the board's repository is held, and so is a file of a linked worktree of it, relative to that worktree.
    expect(decision(hook(t.root, preToolUse(t.root, 'Edit', { file_path: join(t.root, 'README.md') })).stdout).permissionDecisionReason).toContain(
      'README.md is outside the file scope',
    );
    git(t.root, ['commit', '-q', '--allow-empty', '-m', 'first']);
    const linked = join(t.root, 'wt');
    git(t.root, ['worktree', 'add', '-q', linked]);
    expect(decision(hook(linked, preToolUse(linked, 'Edit', { file_path: join(linked, 'README.md') })).stdout).permissionDecisionReason).toContain(
      'README.md is outside the file scope',
    );
    expect(hook(linked, preToolUse(linked, 'Edit', { file_path: join(linked, 'src/parser/lexer.ts') })).stdout).toBe('');
  });

  it('holds nobody without a scoped task in progress, and keeps every agent out of the board files', () => {
    const t = scopedBoard();
    const anywhere = preToolUse(t.root, 'Edit', { file_path: join(t.root, 'src/cli.ts') });
    expect(hook(t.root, anywhere).stdout).toBe('');
    expect(tasks(t.root, ['claim', '2'], { TASKS_OWNER: 'claude' }).code).toBe(0);
    expect(hook(t.root, anywhere).stdout).toBe('');
    expect(hook(t.root, anywhere, 'someone-else').stdout).toBe('');
    const board = decision(hook(t.root, preToolUse(t.root, 'Edit', { file_path: join(t.board, 'task_1.json') })).stdout);
    expect(board).toMatchObject({ permissionDecision: 'deny' });
    expect(board.permissionDecisionReason).toContain('is a file of the task board: change tasks through the todo tool');
  });

  it('lets the call through when the payload is unreadable or there is no board', () => {
    const t = scopedBoard();
    expect(hook(t.root, 'not json')).toMatchObject({ code: 0, stdout: '' });
    const none = tempBoard({ init: false });
    const outside = hook(none.root, preToolUse(none.root, 'Edit', { file_path: join(none.root, 'a.ts') }));
    none.cleanup();
    expect(outside).toMatchObject({ code: 0, stdout: '' });
  });
});

describe('the pre-commit hook of tasks init --git, in a task worktree', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('refuses a commit that touches files outside the task scope, naming them and the override, and takes one inside it', () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    expect(tasks(r.repo, ['init', '--git']).stdout).toContain('installed the pre-commit hook');
    tasks(r.repo, ['create', 'Parser', '--path', 'src/parser/**']);
    const claim = JSON.parse(tasks(r.repo, ['claim', '1', '--worktree', '--owner', 'alice', '--json']).stdout) as { worktree: { path: string } };
    const wt = claim.worktree.path;
    mkdirSync(join(wt, 'src/parser'), { recursive: true });
    writeFileSync(join(wt, 'src/parser/lexer.ts'), 'export {};\n');
    writeFileSync(join(wt, 'src/cli.ts'), 'export {};\n');
    git(wt, ['add', '-A']);
    const refused = spawnSync('git', ['commit', '-q', '-m', 'lexer and cli'], { cwd: wt, encoding: 'utf8', env: cleanEnv() });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('this commit touches a file outside the scope of task #1 (Parser: src/parser/**): src/cli.ts.');
    expect(refused.stderr).toContain('DOTASKS_ALLOW_OUT_OF_SCOPE=1 git commit');
    expect(spawnSync('git', ['rev-list', '--count', 'HEAD'], { cwd: wt, encoding: 'utf8' }).stdout.trim()).toBe('1');
    git(wt, ['restore', '--staged', 'src/cli.ts']);
    expect(spawnSync('git', ['commit', '-q', '-m', 'lexer'], { cwd: wt, encoding: 'utf8', env: cleanEnv() }).status).toBe(0);
    git(wt, ['add', 'src/cli.ts']);
    const allowed = spawnSync('git', ['commit', '-q', '-m', 'cli too'], { cwd: wt, encoding: 'utf8', env: cleanEnv({ DOTASKS_ALLOW_OUT_OF_SCOPE: '1' }) });
    expect(allowed.status).toBe(0);
    expect(spawnSync('git', ['rev-list', '--count', 'HEAD'], { cwd: wt, encoding: 'utf8' }).stdout.trim()).toBe('3');
    // The main checkout is no task's worktree: its commits are not held.
    writeFileSync(join(r.repo, 'notes.md'), 'x\n');
    git(r.repo, ['add', 'notes.md']);
    expect(spawnSync('git', ['commit', '-q', '-m', 'notes'], { cwd: r.repo, encoding: 'utf8', env: cleanEnv() }).status).toBe(0);
  });
});

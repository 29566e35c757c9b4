import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tasks, tempBoard } from '../helpers.js';

const payload = (session: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ session_id: session, transcript_path: '/tmp/t.jsonl', hook_event_name: 'Stop', stop_hook_active: false, ...extra });

describe('tasks guard', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('plain: silent exit 0 with nothing in progress, else the nudge with the exact command and exit 1', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    tasks(t.root, ['create', 'Parse AST']);
    const quiet = tasks(t.root, ['guard', '--owner', 'agent-1']);
    expect(quiet).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(tasks(t.root, ['update', '1', '--status', 'in_progress', '--owner', 'agent-1']).code).toBe(0);
    expect(tasks(t.root, ['list']).stdout).toContain('[>] #1: Parse AST (agent-1)');
    const nudge = tasks(t.root, ['guard', '--owner', 'agent-1']);
    expect(nudge.code).toBe(1);
    expect(nudge.stdout).toContain('Task #1 (Parse AST) is still marked in_progress');
    expect(nudge.stdout).toContain('tasks done 1');
    // Another owner's work is not this agent's business.
    expect(tasks(t.root, ['guard', '--owner', 'agent-2'])).toMatchObject({ code: 0, stdout: '' });
    const json = tasks(t.root, ['guard', '--json'], { TASKS_OWNER: 'agent-1' });
    expect(JSON.parse(json.stdout)).toMatchObject({ owner: 'agent-1', inProgress: [1] });
  });

  it('--hook claude: blocks once per task per session, then lets the agent stop', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    tasks(t.root, ['create', 'Parse AST']);
    tasks(t.root, ['create', 'Transform AST', '--blocked-by', '1']);
    const env = { TASKS_OWNER: 'claude' };
    const hook = (input: string) => tasks(t.root, ['guard', '--hook', 'claude'], env, input);

    expect(hook(payload('s1'))).toMatchObject({ code: 0, stdout: '' });
    tasks(t.root, ['start', '1'], env);
    const first = hook(payload('s1'));
    expect(first.code).toBe(0);
    const decision = JSON.parse(first.stdout) as { decision: string; reason: string };
    expect(decision.decision).toBe('block');
    expect(decision.reason).toContain('Task #1 (Parse AST)');
    expect(decision.reason).toContain('tasks done 1');
    // Once per task per session: the same session may now stop.
    expect(hook(payload('s1'))).toMatchObject({ code: 0, stdout: '' });
    // stop_hook_active means it is already continuing because of a stop hook: never block then.
    expect(hook(payload('s2', { stop_hook_active: true }))).toMatchObject({ code: 0, stdout: '' });
    // A new session gets its own reminder.
    expect(JSON.parse(hook(payload('s2')).stdout).decision).toBe('block');
    // A new task in progress in the old session gets one too.
    tasks(t.root, ['done', '1'], env);
    tasks(t.root, ['start', '2'], env);
    expect(JSON.parse(hook(payload('s1')).stdout).reason).toContain('Task #2 (Transform AST)');
    expect(hook(payload('s1'))).toMatchObject({ code: 0, stdout: '' });
    // Remembered under .tasks/.runtime/guard/.
    expect(readdirSync(join(t.board, '.runtime', 'guard')).filter((n) => n.endsWith('.json'))).toHaveLength(2);
  });

  it('--hook claude: finds the board from the payload cwd, and is silent without a board or with a bad payload', () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const empty = tempBoard({ init: false });
    const cleanBoth = t.cleanup;
    cleanup = () => {
      cleanBoth();
      empty.cleanup();
    };
    tasks(t.root, ['create', 'Parse AST']);
    tasks(t.root, ['start', '1', '--owner', 'claude']);
    const fromCwd = tasks(empty.root, ['guard', '--hook', 'claude', '--owner', 'claude'], {}, payload('s9', { cwd: t.root }));
    expect(JSON.parse(fromCwd.stdout).decision).toBe('block');
    expect(tasks(empty.root, ['guard', '--hook', 'claude'], {}, payload('s9'))).toMatchObject({ code: 0, stdout: '' });
    expect(existsSync(join(empty.root, '.tasks'))).toBe(false);
    const garbage = tasks(t.root, ['guard', '--hook', 'claude', '--owner', 'claude'], {}, 'not json');
    expect(garbage).toMatchObject({ code: 0, stdout: '' });
    expect(garbage.stderr).toContain('not JSON');
  });
});

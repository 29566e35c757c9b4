import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '@dotasks/core';
import { TASKS_BIN, cleanEnv, collectOutput, createTasks, readTaskFile, tasks, tempBoard } from '../helpers.js';

/** The command a nudge tells the agent to run to complete its task. */
const doneCommand = (nudge: string): string => /run `([^`]+)`/.exec(nudge)![1];

/** The environment of the agent's own shell: no TASKS_*, and a PATH without the bin's folder (node stays findable). */
const agentEnv = (extraPath: string[] = []): NodeJS.ProcessEnv => {
  const env = cleanEnv();
  for (const key of Object.keys(env)) if (key.startsWith('npm_')) delete env[key];
  env.PATH = [...extraPath, dirname(process.execPath), '/usr/bin', '/bin'].join(delimiter);
  return env;
};

/** Runs `command` as the agent's shell would: sh -c, in the repository. */
const inAgentShell = (root: string, command: string, env: NodeJS.ProcessEnv) =>
  spawnSync('sh', ['-c', command], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });

/** `tasks start ID --owner OWNER` in process: the task in progress a guard is then run beside (start has its own tests). */
const startAs = (board: string, id: number, owner: string) => new TaskStore(board).startTask(id, { owner, actor: owner });

const payload = (session: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ session_id: session, transcript_path: '/tmp/t.jsonl', hook_event_name: 'Stop', stop_hook_active: false, ...extra });

describe('tasks guard', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('plain: silent exit 0 with nothing in progress, else the nudge with the exact command and exit 1', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Parse AST']);
    const quiet = tasks(t.root, ['guard', '--owner', 'agent-1']);
    expect(quiet).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(tasks(t.root, ['update', '1', '--status', 'in_progress', '--owner', 'agent-1']).code).toBe(0);
    expect(tasks(t.root, ['list']).stdout).toContain('[>] #1: Parse AST (agent-1)');
    const nudge = tasks(t.root, ['guard', '--owner', 'agent-1']);
    expect(nudge.code).toBe(1);
    expect(nudge.stdout).toContain('Task #1 (Parse AST) is still marked in_progress');
    expect(doneCommand(nudge.stdout)).toMatch(/ done 1 --owner agent-1$/);
    // Another owner's work is not this agent's business.
    expect(tasks(t.root, ['guard', '--owner', 'agent-2'])).toMatchObject({ code: 0, stdout: '' });
    const json = tasks(t.root, ['guard', '--json'], { TASKS_OWNER: 'agent-1' });
    expect(JSON.parse(json.stdout)).toMatchObject({ owner: 'agent-1', inProgress: [1] });
  });

  it('--hook claude: blocks once per task per session, then lets the agent stop', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Parse AST', { subject: 'Transform AST', blockedBy: [1] }]);
    const env = { TASKS_OWNER: 'claude' };
    const hook = (input: string) => tasks(t.root, ['guard', '--hook', 'claude'], env, input);

    expect(hook(payload('s1'))).toMatchObject({ code: 0, stdout: '' });
    tasks(t.root, ['start', '1'], env);
    const first = hook(payload('s1'));
    expect(first.code).toBe(0);
    const decision = JSON.parse(first.stdout) as { decision: string; reason: string };
    expect(decision.decision).toBe('block');
    expect(decision.reason).toContain('Task #1 (Parse AST)');
    expect(doneCommand(decision.reason)).toMatch(/ done 1 --owner claude$/);
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

  it('--hook claude: finds the board from the payload cwd, and is silent without a board or with a bad payload', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    const empty = tempBoard({ init: false });
    const cleanBoth = t.cleanup;
    cleanup = () => {
      cleanBoth();
      empty.cleanup();
    };
    await createTasks(t.board, ['Parse AST']);
    await startAs(t.board, 1, 'claude');
    const fromCwd = tasks(empty.root, ['guard', '--hook', 'claude', '--owner', 'claude'], {}, payload('s9', { cwd: t.root }));
    expect(JSON.parse(fromCwd.stdout).decision).toBe('block');
    expect(tasks(empty.root, ['guard', '--hook', 'claude'], {}, payload('s9'))).toMatchObject({ code: 0, stdout: '' });
    expect(existsSync(join(empty.root, '.tasks'))).toBe(false);
    const garbage = tasks(t.root, ['guard', '--hook', 'claude', '--owner', 'claude'], {}, 'not json');
    expect(garbage).toMatchObject({ code: 0, stdout: '' });
    expect(garbage.stderr).toContain('not JSON');
  });

  it("--hook claude: the nudge gives a command that completes the task in the agent's shell (its own PATH, no TASKS_OWNER)", async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Parse AST', 'Transform AST']);
    await startAs(t.board, 1, 'claude');
    const hook = (session: string, env: NodeJS.ProcessEnv, bin = TASKS_BIN) => {
      const r = spawnSync(process.execPath, [bin, 'guard', '--hook', 'claude', '--owner', 'claude'], {
        cwd: t.root,
        env,
        input: payload(session),
        encoding: 'utf8',
      });
      expect(r.status).toBe(0);
      return doneCommand((JSON.parse(r.stdout) as { reason: string }).reason);
    };

    // The bin is not on the agent's PATH (a checkout here; an installed project gets npx, see install.test.ts).
    const command = hook('s1', cleanEnv({ TASKS_OWNER: 'claude' }));
    expect(command).toBe(`node ${TASKS_BIN} done 1 --owner claude`);
    // What the guard says today would not do: the shell acts as the user, and finds no tasks.
    expect(inAgentShell(t.root, 'tasks done 1', agentEnv()).status).not.toBe(0);
    const done = inAgentShell(t.root, command, agentEnv());
    expect(done.stderr).toBe('');
    expect(done.status).toBe(0);
    expect(readTaskFile(t.board, 1)).toMatchObject({ status: 'completed', owner: 'claude' });

    // On the agent's PATH: plain `tasks`, which works there.
    const bin = join(t.root, 'bin');
    mkdirSync(bin);
    symlinkSync(TASKS_BIN, join(bin, 'tasks'));
    tasks(t.root, ['start', '2', '--owner', 'claude']);
    const onPath = hook('s2', { ...agentEnv([bin]) });
    expect(onPath).toBe('tasks done 2 --owner claude');
    // Run by npx, the node_modules/.bin folders on the hook's PATH are npx's, not the agent's.
    const npxBin = join(t.root, 'node_modules', '.bin');
    mkdirSync(npxBin, { recursive: true });
    symlinkSync(TASKS_BIN, join(npxBin, 'tasks'));
    expect(hook('s3', { ...agentEnv([npxBin]), npm_command: 'exec' }, join(npxBin, 'tasks'))).toBe(`node ${TASKS_BIN} done 2 --owner claude`);
    expect(inAgentShell(t.root, onPath, agentEnv([bin])).status).toBe(0);
    expect(readTaskFile(t.board, 2)).toMatchObject({ status: 'completed' });
  });

  it('--hook claude: empty, closed or silent stdin does not block', async () => {
    const t = tempBoard();
    cleanup = t.cleanup;
    await createTasks(t.board, ['Parse AST']);
    await startAs(t.board, 1, 'claude');
    const args = [TASKS_BIN, 'guard', '--hook', 'claude', '--owner', 'claude'];
    const started = Date.now();
    // < /dev/null
    const devNull = spawnSync(process.execPath, args, { cwd: t.root, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', timeout: 20_000 });
    expect(devNull.status).toBe(0);
    expect(JSON.parse(devNull.stdout).decision).toBe('block'); // no payload: no session, still one reminder
    // stdin closed altogether
    const closed = spawnSync('sh', ['-c', `exec "$0" "$@" <&-`, process.execPath, ...args], {
      cwd: t.root,
      env: cleanEnv(),
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(closed.status).toBe(0);
    expect(closed.stdout).toBe(''); // already reminded in that (missing) session
    expect(Date.now() - started).toBeLessThan(15_000);
    // A pipe that stays open and silent (a runner that never writes nor closes): given up on after 2 s.
    const silent = spawn(process.execPath, args, { cwd: t.root, env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const silentStart = Date.now();
    const result = await collectOutput(silent);
    expect(result.code).toBe(0);
    expect(Date.now() - silentStart).toBeLessThan(10_000);
    // A payload written whole on a pipe left open is read without waiting for its end.
    const open = spawn(process.execPath, args, { cwd: t.root, env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    open.stdin.write(payload('s-open'));
    const answered = await collectOutput(open);
    expect(JSON.parse(answered.stdout).decision).toBe('block');
    silent.stdin.destroy();
    open.stdin.destroy();
  });
});

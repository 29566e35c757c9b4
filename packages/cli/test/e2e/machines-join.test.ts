import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tasks, tasksAsync } from '../helpers.js';
import { boardFiles, branchNames, git, until } from '../../../core/test/git-remote.js';
import { machines, ok, subjects, useMachines, watchSync } from '../machines-helpers.js';

/**
 * A second machine joining, as real processes: fresh clones with and
 * without a committed board, `.runtime/` removed between and during
 * commands, and a board moving between the code branch and its board
 * branch.
 */

const fixture = useMachines();

describe('a second machine joins', () => {
  /** A repository whose board syncs: its config and .gitignore committed on main, its tasks on the board branch. */
  async function syncedRepository(): Promise<string> {
    const [a] = await machines(1);
    for (const s of ['one', 'two', 'three']) ok(a, ['create', s]);
    ok(a, ['sync']);
    git(a, 'add', '.tasks');
    git(a, 'commit', '-q', '-m', 'the board syncs');
    git(a, 'push', '-q', 'origin', 'main');
    return a;
  }

  it('in fresh clones of a repository with its board committed, every --sync command works the first time', async () => {
    await syncedRepository();
    expect(git(fixture().bare, 'ls-tree', '--name-only', 'main:.tasks').split('\n').sort()).toEqual(['.gitignore', 'config.json']);
    const fresh = (name: string) => {
      const dir = fixture().clone(name);
      expect(existsSync(join(dir, '.tasks', '.runtime'))).toBe(false);
      return dir;
    };
    const lister = fresh('l');
    const listed = tasks(lister, ['list']);
    expect(listed.code).toBe(0);
    expect(listed.stderr).toMatch(/this board lives on origin\/tasks .*tasks sync brings its tasks here/);
    expect(ok(fresh('s'), ['sync'])).toMatch(/^in {3}#1 created$/m);
    expect(ok(fresh('c'), ['claim', '--next', '--sync', '--owner', 'c-agent'])).toMatch(/^claimed #1: one/m);
    const w = tasks(fresh('w'), ['worker', '--sync', '--max-tasks', '1', '--owner', 'w-agent', '--', 'true']);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stderr).toMatch(/completed #2/);
    const r = fresh('r');
    expect(ok(r, ['reap', '--sync'])).toMatch(/nothing to reap/);
    const watcher = watchSync(fresh('v'));
    await until(() => watcher.out().includes('"type":"synced"'), { what: 'watch --sync to sync a fresh clone' });
    ok(r, ['sync']);
    expect(JSON.parse(tasks(r, ['show', '1', '--json']).stdout)).toMatchObject({ status: 'in_progress', owner: 'c-agent' });
    expect(JSON.parse(tasks(r, ['show', '2', '--json']).stdout).status).toBe('completed');
  });

  it('in a fresh clone with no board, sync and init set it up from the remote and say so', async () => {
    const [a] = await machines(1);
    ok(a, ['create', 'made on a']);
    ok(a, ['sync']);
    const s = fixture().clone('s');
    expect(ok(s, ['sync'])).toMatch(/set up the board in .* from origin\/tasks[\s\S]*in {3}#1 created/);
    const i = fixture().clone('i');
    expect(ok(i, ['init'])).toMatch(/origin\/tasks already holds a board: set up .* from it \(1 task\)/);
    expect(subjects(i)).toEqual(['made on a']);
    // Where the remote has no board, the old advice stands.
    rmSync(join(a, '.tasks'), { recursive: true, force: true });
    git(fixture().bare, 'branch', '-D', 'tasks');
    const none = tasks(a, ['sync']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no task board found .* and origin has no board branch 'tasks'; run 'tasks init'/);
  });

  it('.runtime/ removed between commands and while they run costs leases and caches at most', async () => {
    const [a, b] = await machines(2);
    for (let i = 1; i <= 6; i++) ok(a, ['create', `task ${i}`]);
    ok(a, ['sync']);
    ok(b, ['sync']);
    const runtime = join(b, '.tasks', '.runtime');
    // Between commands: every one of them works as if nothing had happened.
    for (const args of [
      ['sync'],
      ['claim', '--next', '--sync', '--owner', 'b-agent'],
      ['heartbeat', '--sync', '--owner', 'b-agent'],
      ['reap', '--sync'],
      ['list'],
    ]) {
      rmSync(runtime, { recursive: true, force: true });
      ok(b, args);
    }
    ok(b, ['release', '1', '--owner', 'b-agent']);
    // While they run: a command may fail, in one line that says nothing was lost, and never takes the board for gone.
    let removing = true;
    const remover = (async () => {
      while (removing) {
        try {
          rmSync(runtime, { recursive: true, force: true });
        } catch {
          // a command made a file in it meanwhile: the next round removes it
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const outcomes: string[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        for (const args of [['claim', '--next', '--sync', '--owner', 'b-agent'], ['done', String(i + 1), '--owner', 'b-agent'], ['sync']]) {
          const r = await tasksAsync(b, args);
          // Whatever it met, a command says so in one line, never a stack.
          if (r.code !== 0) {
            expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
            expect(r.stderr).not.toMatch(/was the board removed/);
          }
          outcomes.push(`${args[0]}:${r.code}`);
        }
      }
    } finally {
      removing = false;
      await remover;
    }
    // Afterwards, with .runtime/ left alone, the board settles and nothing was lost.
    for (let i = 1; i <= 6; i++) tasks(b, ['done', String(i), '--force']);
    ok(b, ['sync']);
    ok(a, ['sync']);
    expect(subjects(a)).toHaveLength(6);
    expect(boardFiles(join(a, '.tasks'))).toEqual(boardFiles(join(b, '.tasks')));
    expect(JSON.parse(tasks(a, ['list', '--json']).stdout).tasks.every((t: { status: string }) => t.status === 'completed')).toBe(true);
    expect(outcomes.filter((o) => o.endsWith(':0')).length).toBeGreaterThan(0);
  });
});

describe('the two homes of a board', () => {
  it('a board committed with the code is refused by sync, adopted in one commit, and retired back in another', async () => {
    const [a] = await machines(1);
    for (const s of ['one', 'two']) ok(a, ['create', s]);
    git(a, 'add', '.tasks');
    git(a, 'commit', '-q', '-m', 'the board');
    writeFileSync(join(a, 'README.md'), '# staged, not part of the move\n');
    git(a, 'add', 'README.md');
    const refused = tasks(a, ['sync']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/the board's tasks are committed on the code branch \(3 file\(s\).*tasks sync --adopt/);
    expect(git(fixture().bare, 'branch', '--list', 'tasks')).toBe('');

    expect(ok(a, ['sync', '--adopt'])).toMatch(/adopted: 3 board file\(s\) left the code branch in commit [0-9a-f]{10}/);
    expect(git(a, 'ls-tree', '--name-only', 'HEAD:.tasks').split('\n').sort()).toEqual(['.gitignore', 'config.json']);
    expect(git(a, 'log', '-1', '--format=%s')).toBe('tasks: the board moves to origin/tasks');
    // What else was staged stays staged, and out of the commit.
    expect(git(a, 'status', '--porcelain')).toBe('M  README.md');
    expect(branchNames(fixture().bare).join('\n')).toMatch(/task_1\.json[\s\S]*task_2\.json/);
    git(a, 'commit', '-q', '-m', 'readme');
    git(a, 'push', '-q', 'origin', 'main');
    // Kept in both places again (a task file added by force): doctor names it and the fix.
    git(a, 'add', '-f', '.tasks/task_1.json');
    const twice = tasks(a, ['doctor']);
    expect(twice.code).toBe(1);
    expect(twice.stdout).toMatch(/the board syncs through origin\/tasks .* and 1 of its files are also committed on the code branch[\s\S]*tasks sync --adopt/);
    git(a, 'rm', '-q', '--cached', '.tasks/task_1.json');
    expect(tasks(a, ['doctor']).code).toBe(0);
    const b = fixture().clone('b');
    expect(ok(b, ['sync'])).toMatch(/in {3}#2 created/);
    ok(b, ['create', 'three']);
    ok(b, ['sync']);

    // Back to the code branch.
    expect(ok(a, ['sync', '--retire'])).toMatch(/retired origin\/tasks: the board is committed on the code branch again in commit/);
    expect(git(a, 'ls-tree', '--name-only', 'HEAD:.tasks').split('\n').sort()).toEqual([
      '.gitignore',
      '.highwatermark',
      'config.json',
      'task_1.json',
      'task_2.json',
      'task_3.json',
    ]);
    expect(git(a, 'status', '--porcelain')).toBe('');
    git(a, 'push', '-q', 'origin', 'main');
    const late = tasks(b, ['sync']);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/origin\/tasks no longer holds the board: it went back to the code branch .* git pull brings it/);
    git(b, 'pull', '-q', '--no-rebase', 'origin', 'main');
    expect(
      readdirSync(join(b, '.tasks'))
        .filter((n) => n.startsWith('task_'))
        .sort(),
    ).toEqual(['task_1.json', 'task_2.json', 'task_3.json']);
    expect(git(b, 'status', '--porcelain')).toBe('');
  });
});

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TASKS_BIN, cleanEnv, tasks } from '../helpers.js';
import { boardFiles, git, onBranch, pushToBoardBranch, stopChild, until } from '../../../core/test/git-remote.js';
import { machines, ok, subjects, useMachines, watchSync } from '../machines-helpers.js';

/**
 * What people and machines do to a shared remote, as real processes: the
 * board branch deleted, force-pushed and replaced while `watch --sync` runs
 * in two clones, and syncs SIGKILLed at random points.
 */

const fixture = useMachines();

describe('the board branch is deleted, rewritten or replaced while watch --sync runs in two clones', () => {
  it('every clone stops syncing with its files as they were, and the fix command restores the remote for both', async () => {
    const [a, b] = await machines(2, { daemon: true });
    for (const s of ['one', 'two', 'three']) ok(a, ['create', s]);
    ok(a, ['sync']);
    const first = git(fixture().bare, 'rev-parse', 'tasks');
    const wa = watchSync(a);
    const wb = watchSync(b);
    await until(() => subjects(b).length === 3, { what: 'b to bring the board in' });

    // Deleted.
    git(fixture().bare, 'branch', '-D', 'tasks');
    ok(b, ['create', 'four, made while the branch is gone']);
    await until(() => /is gone from the remote/.test(wa.err()) && /is gone from the remote/.test(wb.err()), { what: 'both watchers to refuse' });
    expect(subjects(a)).toEqual(['one', 'three', 'two']);
    expect(subjects(b)).toHaveLength(4);
    expect(wb.err()).toMatch(/tasks sync --republish/);
    // Said once, not every interval.
    expect(wb.err().match(/is gone from the remote/g)).toHaveLength(1);
    ok(a, ['sync', '--republish']);
    await until(() => subjects(a).length === 4 && subjects(b).length === 4, { what: 'both boards to have all four tasks' });

    // Force-pushed back to the first commit: #1's completion and #4 are not on it.
    ok(a, ['done', '1']);
    const completed = (dir: string) => JSON.parse(readFileSync(join(dir, '.tasks', 'task_1.json'), 'utf8')).status === 'completed';
    await until(() => completed(b), { what: 'the completion to reach b' });
    git(fixture().bare, 'update-ref', 'refs/heads/tasks', first);
    await until(() => /was rewritten/.test(wa.err()) && /was rewritten/.test(wb.err()), { what: 'both watchers to refuse the rewrite' });
    for (const dir of [a, b]) {
      expect(subjects(dir)).toHaveLength(4);
      expect(JSON.parse(readFileSync(join(dir, '.tasks', 'task_1.json'), 'utf8')).status).toBe('completed');
    }
    ok(b, ['sync', '--republish']);
    await until(() => /"status": "completed"/.test(git(fixture().bare, 'show', `tasks:${onBranch('task_1.json')}`)), { what: 'the republished board' });
    ok(a, ['create', 'five']);
    await until(() => subjects(b).length === 5, { what: 'a new task to travel again' });

    // Replaced by a code branch of that name.
    const code = pushToBoardBranch(fixture(), { 'README.md': '# tasks service\n' }, { orphan: true });
    await until(() => /is not a board branch: it holds README\.md/.test(wa.err()) && /is not a board branch/.test(wb.err()), {
      what: 'the foreign branch to be refused',
    });
    expect(git(fixture().bare, 'rev-parse', 'tasks')).toBe(code);
    for (const dir of [a, b]) expect(subjects(dir)).toHaveLength(5);
    // Its owner moves it away; the board goes back where it was.
    git(fixture().bare, 'branch', '-m', 'tasks', 'tasks-service');
    ok(a, ['sync', '--republish']);
    ok(b, ['create', 'six']);
    await until(() => subjects(a).length === 6 && subjects(b).length === 6, { what: 'the boards to meet again' });
    expect(boardFiles(join(a, '.tasks'))).toEqual(boardFiles(join(b, '.tasks')));
  });
});

describe('syncs killed at random points', () => {
  it('after 50 SIGKILLs every clone syncs again without a person, and no task is lost or doubled', async () => {
    const dirs = await machines(3);
    let made = 0;
    const create = (dir: string) => ok(dir, ['create', `task ${++made} from ${dir.slice(-2)}`]);
    for (const dir of dirs) create(dir);
    for (const dir of dirs) ok(dir, ['sync']);
    // First, for certain, the kill that wedged a clone: its git dies holding the lock of the ref it updates
    // (strace delivers SIGKILL at git's second call on the lock file, after it was created).
    create(dirs[1]);
    ok(dirs[1], ['sync']);
    const lock = join(dirs[0], '.git', 'refs', 'dotasks', 'remote', 'origin', 'tasks.lock');
    const killed = spawnSync(
      'strace',
      ['-f', '-qq', '-o', '/dev/null', '-P', lock, '-e', 'inject=all:signal=SIGKILL:when=2', process.execPath, TASKS_BIN, 'sync'],
      {
        cwd: dirs[0],
        env: cleanEnv(),
        encoding: 'utf8',
      },
    );
    expect(killed.status, killed.stderr).toBe(1);
    expect(existsSync(lock)).toBe(true);
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let kill = 0; kill < 50; kill++) {
      const dir = dirs[Math.floor(random() * dirs.length)];
      if (random() < 0.6) create(dir);
      const child = spawn(process.execPath, [TASKS_BIN, 'sync'], { cwd: dir, env: cleanEnv(), detached: true, stdio: 'ignore' });
      fixture().track(child);
      await new Promise((r) => setTimeout(r, random() * 150));
      // Half the time only tasks itself dies (its git goes on alone), half the time its git with it.
      try {
        process.kill(random() < 0.5 ? child.pid! : -child.pid!, 'SIGKILL');
      } catch {
        // it had finished
      }
      await stopChild(child);
    }
    // Plain syncs: each clone, twice round, and every one of them succeeds (the left lock is cleared on the way).
    for (let round = 0; round < 2; round++)
      for (const dir of dirs) {
        const r = tasks(dir, ['sync']);
        expect(r.code, `${dir}: ${r.stderr}`).toBe(0);
      }
    const files = dirs.map((dir) => boardFiles(join(dir, '.tasks')));
    expect(files[1]).toEqual(files[0]);
    expect(files[2]).toEqual(files[0]);
    const all = subjects(dirs[0]);
    expect(all).toHaveLength(made);
    expect(new Set(all).size).toBe(made);
  });
});

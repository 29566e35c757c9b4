import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TASKS_BIN, cleanEnv, tasks } from '../helpers.js';
import { createRemote, git, type RemoteFixture } from '../../../core/test/git-remote.js';

/**
 * No git process runs while a board transaction holds a lock of the board
 * (docs/decisions.md, "No git inside a board transaction"): a git that
 * waits on its own locks, a slow remote or a big object store would hold
 * every other command of the board up. Seen in a real process under
 * strace: between the creation of a board, task or owner lock folder and
 * its removal, no git is started.
 */

const hasStrace = spawnSync('strace', ['-V']).status === 0;
let fixture: RemoteFixture | undefined;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = undefined;
});

/** A board's lock folders (not the sync lock, which serializes syncs and is there to be held across git). */
const BOARD_LOCK = /(\/\.board\.lock|\/task_\d+\.json\.lock|\/owner-[0-9a-f]+\.lock)$/;

/** Runs `tasks ...args` under strace; returns its exit status and the git commands it started while it held a board lock. */
function gitInsideLocks(cwd: string, args: string[]): { status: number | null; stdout: string; stderr: string; inside: string[]; locks: number; gits: number } {
  const traced = spawnSync('strace', ['-f', '-qq', '-s', '200', '-e', 'trace=execve,mkdir,rmdir', process.execPath, TASKS_BIN, ...args], {
    cwd,
    env: cleanEnv(),
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const held = new Set<string>();
  const inside: string[] = [];
  let locks = 0;
  let gits = 0;
  for (const line of traced.stderr.split('\n')) {
    const call = line.replace(/^\[pid +\d+\] |^\d+ +/, '');
    const dir = /^(mkdir|rmdir)\("([^"]*)"/.exec(call);
    if (dir && BOARD_LOCK.test(dir[2]) && / = 0$/.test(call)) {
      if (dir[1] === 'mkdir') {
        held.add(dir[2]);
        locks++;
      } else held.delete(dir[2]);
      continue;
    }
    const exec = /^execve\("([^"]*)", \[(.*)\], .* = 0$/.exec(call);
    if (exec && /(^|\/)git(-[a-z-]+)?$/.test(exec[1])) {
      gits++;
      if (held.size) inside.push(exec[2]);
    }
  }
  const ours = traced.stderr
    .split('\n')
    .filter((l) => !/^(\[pid +\d+\] |\d+ +)?(execve|mkdir|rmdir|\+\+\+|---)/.test(l))
    .join('\n');
  return { status: traced.status, stdout: traced.stdout, stderr: ours, inside, locks, gits };
}

function ok(dir: string, args: string[]): string {
  const r = tasks(dir, args);
  expect(r.code, `tasks ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return r.stdout;
}

describe('no git inside a board transaction', () => {
  it('tasks sync: what comes in, a task moved to a free id and its branch renamed, all with git outside the board lock', async () => {
    expect(hasStrace, 'strace is needed for this test (.ci/run installs it)').toBe(true);
    fixture = await createRemote({ prefix: 'dotasks-git-locks-' });
    const [a, b] = ['a', 'b'].map((name) => fixture!.clone(name));
    for (const dir of [a, b]) ok(dir, ['init']);
    ok(a, ['create', 'first']);
    ok(a, ['sync']);
    ok(b, ['sync']);
    // Both clones hand out #2; b's has a worktree on its branch, and a's #1 changes meanwhile.
    ok(a, ['create', 'made on a']);
    ok(a, ['update', '1', '--description', 'changed on a']);
    ok(a, ['sync']);
    ok(b, ['create', 'made on b']);
    ok(b, ['claim', '2', '--owner', 'bee', '--worktree']);
    expect(git(b, 'branch', '--list', 'task/*')).toMatch(/task\/2$/);

    const traced = gitInsideLocks(b, ['sync', '--json']);
    expect(traced.status, traced.stderr).toBe(0);
    expect(traced.locks).toBeGreaterThan(0);
    expect(traced.gits).toBeGreaterThan(0);
    expect(traced.inside).toEqual([]);
    // And it still did what a sync does.
    expect(JSON.parse(traced.stdout)).toMatchObject({
      incoming: [
        { id: 1, what: 'updated' },
        { id: 2, what: 'created' },
      ],
      renumbered: [{ from: 2, to: 3, owner: 'bee', branch: { from: 'task/2', to: 'task/3' } }],
    });
    expect(git(b, 'branch', '--list', 'task/*')).toMatch(/task\/3$/);
    const moved = JSON.parse(ok(b, ['show', '3', '--json'])) as { subject: string; metadata: { branch: string } };
    expect(moved).toMatchObject({ subject: 'made on b', metadata: { branch: 'task/3' } });
    expect((JSON.parse(ok(b, ['show', '1', '--json'])) as { description: string }).description).toBe('changed on a');
  });

  it('tasks doctor --fix: the repairs and the last look under the board lock ask git nothing', async () => {
    expect(hasStrace, 'strace is needed for this test (.ci/run installs it)').toBe(true);
    fixture = await createRemote({ prefix: 'dotasks-git-locks-' });
    const dir = fixture.clone('a');
    ok(dir, ['init', '--git']);
    ok(dir, ['create', 'one']);
    ok(dir, ['create', 'two', '--blocked-by', '1']);
    const traced = gitInsideLocks(dir, ['doctor', '--fix']);
    expect(traced.status, traced.stderr).toBe(0);
    expect(traced.locks).toBeGreaterThan(0);
    expect(traced.gits).toBeGreaterThan(0);
    expect(traced.inside).toEqual([]);
  });

  it('tasks merge: the merge, the check, the move of main and the clean-up run git outside the board lock; only the completion takes it', async () => {
    expect(hasStrace, 'strace is needed for this test (.ci/run installs it)').toBe(true);
    fixture = await createRemote({ prefix: 'dotasks-git-locks-' });
    const dir = fixture.clone('a');
    ok(dir, ['init']);
    writeFileSync(join(dir, '.tasks', 'config.json'), JSON.stringify({ verify: 'test -f work.txt' }) + '\n');
    ok(dir, ['create', 'one']);
    ok(dir, ['create', 'two', '--blocked-by', '1']);
    const claim = JSON.parse(ok(dir, ['claim', '1', '--worktree', '--owner', 'alice', '--json'])) as { worktree: { path: string } };
    writeFileSync(join(claim.worktree.path, 'work.txt'), 'done\n');
    git(claim.worktree.path, 'add', 'work.txt');
    git(claim.worktree.path, 'commit', '-q', '-m', 'work');
    const traced = gitInsideLocks(dir, ['merge', '1', '--owner', 'alice', '--json']);
    expect(traced.status, traced.stderr).toBe(0);
    expect(traced.locks).toBeGreaterThan(0);
    expect(traced.gits).toBeGreaterThan(5);
    expect(traced.inside).toEqual([]);
    expect(JSON.parse(traced.stdout)).toMatchObject({
      task: { id: 1, status: 'completed' },
      unblocked: [2],
      how: 'merge',
      worktreeRemoved: true,
      branchDeleted: true,
    });
  });
});

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTasks, readTaskFile, tasks } from '../helpers.js';
import { git, startTasks, tempRepo } from '../agents-helpers.js';

describe('worktrees (real git)', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('a claim made in one linked worktree is seen at once from another and from the main checkout', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    await createTasks(r.board, ['Parse AST', 'Emit output']);
    const a = join(r.root, 'agent-a');
    const b = join(r.root, 'agent-b');
    git(r.repo, ['worktree', 'add', '-q', a]);
    git(r.repo, ['worktree', 'add', '-q', b]);

    expect(tasks(a, ['whoami']).stdout.trim()).toBe('agent-a (from worktree)');
    const claim = tasks(a, ['claim', '1']);
    expect(claim.code, claim.stderr).toBe(0);
    expect(claim.stdout).toContain('(owner: agent-a');

    for (const where of [b, r.repo]) {
      const seen = JSON.parse(tasks(where, ['show', '1', '--json']).stdout) as { status: string; owner: string };
      expect(seen).toMatchObject({ status: 'in_progress', owner: 'agent-a' });
      const lost = tasks(where, ['claim', '1']);
      expect(lost.code).toBe(3);
      expect(lost.stderr).toContain('already_claimed');
    }
    // The board is the main worktree's: the linked worktrees' own .tasks/ copies are untouched.
    expect(existsSync(join(a, '.tasks', 'task_1.json'))).toBe(false);
    expect(tasks(b, ['claim', '--next']).stdout).toContain('claimed #2: Emit output (owner: agent-b');
    expect(tasks(r.repo, ['list']).stdout).toContain('[>] #2: Emit output (agent-b)');
  });

  it('in a repository with no commit yet, claim --worktree and worker --worktree say so in one line and leave nothing behind', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-nocommit-')));
    cleanup = () => rmSync(root, { recursive: true, force: true });
    const repo = join(root, 'repo');
    mkdirSync(repo);
    git(repo, ['init', '-q', '-b', 'main']);
    expect(tasks(repo, ['init']).code).toBe(0);
    await createTasks(join(repo, '.tasks'), ['first']);
    for (const args of [
      ['claim', '1', '--worktree', '--owner', 'alice'],
      ['worker', '--worktree', '--max-tasks', '1', '--owner', 'alice', '--', 'true'],
    ]) {
      const r = tasks(repo, args);
      expect(r.code, r.stderr).not.toBe(0);
      const lines = r.stderr
        .trim()
        .split('\n')
        .filter((l) => !/^\[alice\] worker (started|stopped)/.test(l));
      expect(lines.join('\n')).toMatch(/the repository has no commit yet, so a worktree has nothing to start from: commit once/);
      expect(r.stderr).not.toMatch(/fatal: not a valid object name/);
      expect(readdirSync(root)).toEqual(['repo']);
      expect(JSON.parse(tasks(repo, ['show', '1', '--json']).stdout)).toMatchObject({ status: 'pending', owner: '' });
    }
  });

  it('claim --worktree makes a branch and a worktree, records them, and commands inside act on the shared board', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    await createTasks(r.board, ['Parse AST', { subject: 'Transform AST', blockedBy: [1] }]);
    const claim = tasks(r.repo, ['claim', '1', '--worktree', '--owner', 'alice', '--json']);
    expect(claim.code, claim.stderr).toBe(0);
    const out = JSON.parse(claim.stdout) as { worktree: { path: string; branch: string; created: boolean } };
    const path = join(r.root, 'repo.worktrees', 'task-1');
    expect(out.worktree).toEqual({ task: 1, path, branch: 'task/1', created: true });
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'in_progress', owner: 'alice', metadata: { worktree: path, branch: 'task/1' } });
    expect(git(path, ['rev-parse', '--abbrev-ref', 'HEAD']).trim()).toBe('task/1');
    expect(JSON.parse(tasks(r.repo, ['show', '1', '--json']).stdout).metadata).toEqual({ worktree: path, branch: 'task/1' });

    // Inside the worktree: the same board, acting as the claimant.
    expect(tasks(path, ['whoami']).stdout.trim()).toBe('alice (from worktree)');
    const done = tasks(path, ['done', '1']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toContain('unblocked #2: Transform AST');
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'completed' });

    const list = JSON.parse(tasks(r.repo, ['worktree', 'list', '--json']).stdout) as { worktrees: unknown[] };
    expect(list.worktrees).toEqual([
      {
        task: 1,
        path,
        branch: 'task/1',
        status: 'completed',
        owner: 'alice',
        exists: true,
        dirty: false,
        // Where the branch stands against main (docs/protocol.md, "The way back to main"): made from it, no commits yet.
        branchStatus: { branch: 'task/1', target: 'main', exists: true, ahead: 0, behind: 0, clean: true, merged: false },
      },
    ]);
    expect(tasks(r.repo, ['worktree', 'list']).stdout).toContain(`#1 completed (alice)  task/1  ${path}  [clean]`);
  });

  it('worktree remove refuses a worktree with uncommitted changes unless --force; the branch stays', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    await createTasks(r.board, ['Parse AST']);
    const custom = join(r.root, 'elsewhere', 'parse');
    expect(tasks(r.repo, ['claim', '1', '--worktree', '--path', custom, '--owner', 'bob']).code).toBe(0);
    writeFileSync(join(custom, 'scratch.txt'), 'not committed\n');
    expect(JSON.parse(tasks(r.repo, ['worktree', 'list', '--json']).stdout).worktrees[0]).toMatchObject({ path: custom, dirty: true });

    const refused = tasks(r.repo, ['worktree', 'remove', '1']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('uncommitted changes');
    expect(refused.stderr).toContain('--force');
    expect(existsSync(join(custom, 'scratch.txt'))).toBe(true);

    // Committed work is fine to remove: it lives on the branch.
    git(custom, ['add', 'scratch.txt']);
    git(custom, ['commit', '-q', '-m', 'work on #1']);
    writeFileSync(join(custom, 'more.txt'), 'again\n');
    expect(tasks(r.repo, ['worktree', 'remove', '1']).code).toBe(1);
    const forced = tasks(r.repo, ['worktree', 'remove', '1', '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(existsSync(custom)).toBe(false);
    expect(git(r.repo, ['log', '--format=%s', 'task/1', '-1']).trim()).toBe('work on #1');
    expect((readTaskFile(r.board, 1).metadata as Record<string, unknown>).worktree).toBeUndefined();
    expect(tasks(r.repo, ['worktree', 'list']).stdout).toContain('no task worktrees');
  });

  it('worktree remove --force removes only a worktree dotasks made for that task; config values reach git only as values', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    await createTasks(r.board, ['Parse AST', 'Emit output']);
    // Someone's own worktree, with uncommitted work, named by hand in task #1's file.
    const theirs = join(r.root, 'my-experiment');
    git(r.repo, ['worktree', 'add', '-q', theirs]);
    writeFileSync(join(theirs, 'precious.txt'), 'not committed\n');
    expect(tasks(r.repo, ['update', '1', '--meta', `worktree="${theirs}"`, '--meta', 'branch="my-experiment"']).code).toBe(0);
    const refused = tasks(r.repo, ['worktree', 'remove', '1', '--force']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is not a worktree dotasks made for task #1');
    expect(existsSync(join(theirs, 'precious.txt'))).toBe(true);
    // #2's own worktree, but #1's file points at it: not #1's either.
    expect(tasks(r.repo, ['claim', '2', '--worktree', '--owner', 'bob']).code).toBe(0);
    const two = join(r.root, 'repo.worktrees', 'task-2');
    expect(tasks(r.repo, ['update', '1', '--meta', `worktree="${two}"`]).code).toBe(0);
    expect(tasks(r.repo, ['worktree', 'remove', '1', '--force']).stderr).toContain('(it was made for #2)');
    expect(existsSync(two)).toBe(true);
    // A branch pattern that would reach git as an option is refused before anything is claimed.
    writeFileSync(join(r.board, 'config.json'), JSON.stringify({ branchPattern: '-f{id}' }) + '\n');
    await createTasks(r.board, ['Third']);
    const option = tasks(r.repo, ['claim', '3', '--worktree', '--owner', 'carol']);
    expect(option.code).toBe(1);
    expect(option.stderr).toContain('"-f3", which git does not accept as a branch name');
    expect(readTaskFile(r.board, 3)).toMatchObject({ status: 'pending', owner: '' });
  });

  it('claim --worktree outside git is refused before anything is claimed; a lost claim makes no worktree', async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    await createTasks(r.board, ['Parse AST']);
    expect(tasks(r.repo, ['claim', '1', '--owner', 'alice']).code).toBe(0);
    const lost = tasks(r.repo, ['claim', '1', '--worktree', '--owner', 'bob']);
    expect(lost.code).toBe(3);
    expect(existsSync(join(r.root, 'repo.worktrees', 'task-1'))).toBe(false);

    // A board outside any git repository (the temp folder is not in one).
    const board = join(r.root, 'loose-board');
    expect(tasks(r.root, ['init', '--dir', board]).code).toBe(0);
    expect(tasks(r.root, ['create', 'Loose', '--dir', board]).code).toBe(0);
    const refused = tasks(r.root, ['claim', '1', '--worktree', '--dir', board, '--owner', 'carol']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('not inside a git repository');
    expect(readTaskFile(board, 1)).toMatchObject({ status: 'pending', owner: '' });
  });

  it('worker --worktree runs each task in its own worktree on its own branch', { timeout: 300_000 }, async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    await createTasks(r.board, ['Parse AST', { subject: 'Emit output', blockedBy: [1] }]);
    // Each task commits a file on its branch, from inside its worktree.
    const cmd = 'echo "$TASK_SUBJECT" > "task-$TASK_ID.txt" && git add . && git -c user.name=w -c user.email=w@x commit -q -m "$TASK_SUBJECT"';
    const w = await startTasks(r.repo, ['worker', '--worktree', '--owner', 'bot', '--', cmd]).done;
    expect(w.code, w.stderr).toBe(0);
    for (const id of [1, 2]) {
      const path = join(r.root, 'repo.worktrees', `task-${id}`);
      expect(readTaskFile(r.board, id)).toMatchObject({ status: 'completed', metadata: { worktree: path, branch: `task/${id}` } });
      expect(existsSync(join(path, `task-${id}.txt`))).toBe(true);
      expect(git(r.repo, ['log', '--format=%s', `task/${id}`, '-1']).trim()).toBe(id === 1 ? 'Parse AST' : 'Emit output');
    }
    expect(w.stderr).toContain(`(worktree ${join(r.root, 'repo.worktrees', 'task-1')}, branch task/1)`);
  });

  it("claim --worktree waits out another worktree's files caught half-written or half-removed (a worktree add or remove running beside it)", async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    await createTasks(r.board, ['Parse AST']);
    git(r.repo, ['worktree', 'add', '-q', join(r.root, 'other')]);
    // What git's listing finds while another git removes that worktree: its commondir emptied, not yet gone.
    const commondir = join(r.repo, '.git', 'worktrees', 'other', 'commondir');
    const text = readFileSync(commondir, 'utf8');
    writeFileSync(commondir, '');
    const trace = join(r.root, 'git-trace');
    const claim = startTasks(r.repo, ['claim', '1', '--worktree', '--owner', 'alice'], { GIT_TRACE2: trace });
    // Once git's listing has failed on it, the other git finishes (here: the file is whole again).
    await vi.waitFor(() => expect(existsSync(trace) && readFileSync(trace, 'utf8')).toContain('error failed to read'), { timeout: 30_000, interval: 10 });
    writeFileSync(commondir, text);
    const end = await claim.done;
    expect(end.code, end.stderr).toBe(0);
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'in_progress', owner: 'alice', metadata: { branch: 'task/1' } });
  });

  it("claim --worktree's own worktree add waits out another worktree caught half-written (a merge's scratch checkout made beside it)", async () => {
    const r = tempRepo();
    cleanup = r.cleanup;
    await createTasks(r.board, ['Parse AST']);
    git(r.repo, ['worktree', 'add', '-q', join(r.root, 'other')]);
    const commondir = join(r.repo, '.git', 'worktrees', 'other', 'commondir');
    const text = readFileSync(commondir, 'utf8');
    // git on the PATH, wrapped: the first `git worktree add` meets the other worktree as another git leaves it mid-write
    // (its commondir still empty), and that git has finished by the next one. Every command is real git's.
    const bin = join(r.root, 'bin');
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const adds = join(r.root, 'adds');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'git'),
      [
        '#!/bin/sh',
        'if [ "$1" = worktree ] && [ "$2" = add ]; then',
        `  echo add >> '${adds}'`,
        `  if [ "$(wc -l < '${adds}')" -eq 1 ]; then : > '${commondir}'; else printf '%s' '${text.trim()}' > '${commondir}'; fi`,
        'fi',
        `exec '${realGit}' "$@"`,
      ].join('\n') + '\n',
      { mode: 0o755 },
    );
    const claim = tasks(r.repo, ['claim', '1', '--worktree', '--owner', 'alice'], { PATH: `${bin}:${process.env.PATH}` });
    expect(claim.code, claim.stderr).toBe(0);
    expect(readFileSync(adds, 'utf8')).toBe('add\nadd\n'); // refused once on the half-written worktree, then made
    expect(readTaskFile(r.board, 1)).toMatchObject({ status: 'in_progress', owner: 'alice', metadata: { branch: 'task/1' } });
    const listed = git(r.repo, ['worktree', 'list', '--porcelain']);
    expect(listed).toContain(`worktree ${join(r.root, 'other')}`);
    expect(listed).toContain('branch refs/heads/task/1');
  });
});

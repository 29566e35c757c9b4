// The branch statuses the page shows, and the cheap question the page's
// safety poll asks instead of reading the board again: did a branch move?
import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_CONFIG } from '../board-config.js';
import type { Task } from '../format/format.js';
import { createBranchStatusReader } from './branch-status.js';

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'commit.gpgsign=false', ...args], { cwd, stdio: 'pipe' });

describe('branch statuses', () => {
  it('moved() says whether the target or a branch asked about moved since the last read, from the refs alone', () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'dotasks-branch-status-')));
    git(root, 'init', '-q', '-b', 'main');
    mkdirSync(join(root, '.tasks'));
    writeFileSync(join(root, 'a.txt'), 'a\n');
    git(root, 'add', '.');
    git(root, 'commit', '-q', '-m', 'start');
    git(root, 'branch', 'task/1');
    const task: Task = {
      id: 1,
      subject: 'one',
      description: '',
      status: 'in_progress',
      owner: 'ann',
      blockedBy: [],
      blocks: [],
      metadata: { branch: 'task/1' },
      extra: {},
    };
    const reader = createBranchStatusReader(join(root, '.tasks'), () => DEFAULT_CONFIG);
    expect(reader.read([task]).get(1)).toMatchObject({ branch: 'task/1', exists: true, ahead: 0 });
    expect(reader.moved()).toBe(false);

    // A commit on the task's branch, in its own worktree (the main checkout stays on main, the target).
    const wt = join(root, 'wt');
    git(root, 'worktree', 'add', '-q', wt, 'task/1');
    writeFileSync(join(wt, 'b.txt'), 'b\n');
    git(wt, 'add', '.');
    git(wt, 'commit', '-q', '-m', 'work');
    expect(reader.moved()).toBe(true);
    expect(reader.read([task]).get(1)).toMatchObject({ ahead: 1 });
    expect(reader.moved()).toBe(false);

    writeFileSync(join(root, 'c.txt'), 'c\n');
    git(root, 'add', '.');
    git(root, 'commit', '-q', '-m', 'on main');
    expect(reader.moved()).toBe(true);
  });
});

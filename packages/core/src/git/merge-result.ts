// The git side of `tasks merge`, run inside the merge slot (merge-slot.ts):
// the merged commit, made without touching any checkout (merge-tree and
// commit-tree; a rebase in a scratch worktree), the scratch checkout the
// checks run in, and the one step that moves the target. Every git here
// runs asynchronously: the slot is refreshed on a timer, and a long
// synchronous git (a big checkout, a slow rebase) would let it go stale.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { TasksError } from '../errors.js';
import { gitAsync } from '../sync/git-locks.js';
import { isWorktreeListingRace, WORKTREE_RACE_RETRY_MS } from './worktrees.js';

/** A git run's outcome as text. */
interface GitText {
  status: number;
  stdout: string;
  stderr: string;
}

/** Internal checkouts run no hooks: they are not a person's checkout, and a hook may take seconds. */
const NO_HOOKS = ['-c', 'core.hooksPath=/dev/null'];

/** Runs git asynchronously; a status outside `ok` is a one-line E_GIT error. */
export async function gitText(cwd: string, args: string[], ok: number[] = [0], env?: NodeJS.ProcessEnv): Promise<GitText> {
  const r = await gitAsync(cwd, args, { env });
  const result = { status: r.status, stdout: r.stdout.toString('utf8'), stderr: r.stderr };
  if (!ok.includes(result.status)) {
    const said = (result.stderr + '\n' + result.stdout).trim().split('\n').filter(Boolean).at(-1) ?? `exit ${result.status}`;
    const command = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '-c');
    throw new TasksError('E_GIT', `git ${command} failed: ${said}`, {
      args,
      stderr: result.stderr,
    });
  }
  return result;
}

/** What a merge of a task's branch is about. */
export interface MergeInput {
  /** The main worktree. */
  repo: string;
  task: number;
  subject: string;
  branch: string;
  tip: string;
  target: string;
  targetSha: string;
  /** Commits on the target the branch lacks: none means the branch can simply move the target on. */
  behind: number;
  strategy: 'merge' | 'rebase';
  ff: boolean;
}

/** The commit the target is to move to, and the scratch checkout it was made in, if one was needed. */
export interface MergedCommit {
  commit: string;
  how: 'merge' | 'rebase' | 'fast-forward';
  checkout?: string;
}

/** The folders of scratch checkouts: in the temp folder, so nothing that scans the repository sees them. */
const SCRATCH_PREFIX = 'dotasks-merge-';

/** The conflict refusal: branch, target and board as they were, and what to do. */
function conflictError(input: MergeInput, files: string[]): TasksError {
  const where = files.length ? ` in ${files.slice(0, 3).join(', ')}${files.length > 3 ? ` and ${files.length - 3} more` : ''}` : '';
  const how = input.strategy === 'rebase' ? `git rebase ${input.target}` : `git merge ${input.target}`;
  return new TasksError(
    'E_CONFLICT',
    `${input.branch} of #${input.task} conflicts with ${input.target}${where}; nothing was changed: in its worktree run '${how}', resolve and commit, then 'tasks merge ${input.task}' again`,
    { id: input.task, branch: input.branch, target: input.target, files },
  );
}

/** Builds the commit the target moves to: a fast-forward, a merge commit (merge-tree, commit-tree) or a rebase. */
export async function makeMergedCommit(input: MergeInput): Promise<MergedCommit> {
  if (input.behind === 0 && (input.ff || input.strategy === 'rebase')) return { commit: input.tip, how: 'fast-forward' };
  if (input.strategy === 'rebase') return rebaseInScratch(input);
  const tree = await gitText(input.repo, ['merge-tree', '--write-tree', '--name-only', '--no-messages', input.targetSha, input.tip], [0, 1]);
  const [treeId, ...files] = tree.stdout.split('\n').filter(Boolean);
  if (tree.status === 1) throw conflictError(input, files);
  const message = `Merge ${input.branch} into ${input.target}: #${input.task} ${input.subject.replace(/\s+/g, ' ').trim()}`;
  const commit = await gitText(input.repo, ['commit-tree', treeId, '-p', input.targetSha, '-p', input.tip, '-m', message]);
  return { commit: commit.stdout.trim(), how: 'merge' };
}

/** A scratch worktree on a detached HEAD at `commit`. */
export async function scratchCheckout(repo: string, commit: string): Promise<string> {
  const path = mkdtempSync(join(tmpdir(), SCRATCH_PREFIX));
  try {
    await pastWorktreeRace(() => gitText(repo, [...NO_HOOKS, 'worktree', 'add', '--quiet', '--force', '--detach', path, commit]));
  } catch (error) {
    rmSync(path, { recursive: true, force: true });
    throw error;
  }
  return path;
}

/** Rebases the branch's commits onto the target in a scratch worktree; a conflict aborts it and refuses. */
async function rebaseInScratch(input: MergeInput): Promise<MergedCommit> {
  const path = await scratchCheckout(input.repo, input.tip);
  try {
    const r = await gitText(path, [...NO_HOOKS, 'rebase', '--quiet', input.targetSha], [0, 1, 128]);
    if (r.status !== 0) {
      const files = (await gitText(path, ['diff', '--name-only', '--diff-filter=U'], [0, 128])).stdout.split('\n').filter(Boolean);
      await gitText(path, [...NO_HOOKS, 'rebase', '--abort'], [0, 1, 128]);
      throw conflictError(input, files);
    }
    const head = await gitText(path, ['rev-parse', 'HEAD']);
    return { commit: head.stdout.trim(), how: 'rebase', checkout: path };
  } catch (error) {
    await removeScratch(input.repo, path);
    throw error;
  }
}

/** Removes a scratch worktree (and git's record of it). */
export async function removeScratch(repo: string, path: string): Promise<void> {
  await gitText(repo, ['worktree', 'remove', '--force', path], [0, 128]);
  rmSync(path, { recursive: true, force: true });
  await gitText(repo, ['worktree', 'prune'], [0, 128]);
}

/** `run()`, run again while git fails on another worktree's half-written files (worktrees.ts, isWorktreeListingRace). */
async function pastWorktreeRace<T>(run: () => Promise<T>): Promise<T> {
  const until = Date.now() + WORKTREE_RACE_RETRY_MS;
  for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
    try {
      return await run();
    } catch (error) {
      if (!isWorktreeListingRace(error) || Date.now() >= until) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** `git worktree list --porcelain`, asked again while another process adds or removes a worktree. */
async function worktreeListing(repo: string): Promise<string> {
  return (await pastWorktreeRace(() => gitText(repo, ['worktree', 'list', '--porcelain']))).stdout;
}

/** `git worktree list --porcelain`: each worktree's path and branch. */
export async function gitWorktrees(repo: string): Promise<{ path: string; branch?: string }[]> {
  const out: { path: string; branch?: string }[] = [];
  for (const line of (await worktreeListing(repo)).split('\n')) {
    if (line.startsWith('worktree ')) out.push({ path: line.slice('worktree '.length) });
    else if (line.startsWith('branch refs/heads/') && out.length) out[out.length - 1].branch = line.slice('branch refs/heads/'.length);
  }
  return out;
}

/** Scratch checkouts a merger that was killed left behind; only the slot's holder calls this, so none is in use. */
export async function removeLeftScratch(repo: string): Promise<void> {
  const scratch = resolve(tmpdir());
  for (const w of await gitWorktrees(repo))
    if (resolve(w.path, '..') === scratch && basename(w.path).startsWith(SCRATCH_PREFIX)) await removeScratch(repo, w.path);
}

/**
 * Moves the target from `from` to `to`. Checked out in a worktree (the main
 * one, usually): git's own fast-forward there, which carries uncommitted
 * changes along and refuses when it would overwrite one; elsewhere: a ref
 * update that only succeeds while the target is still at `from`.
 */
export async function moveTarget(input: MergeInput, to: string): Promise<void> {
  const checkedOut = (await gitWorktrees(input.repo)).find((w) => w.branch === input.target);
  const message = `tasks merge: #${input.task} (${input.branch})`;
  if (!checkedOut) {
    const r = await gitText(input.repo, ['update-ref', '-m', message, `refs/heads/${input.target}`, to, input.targetSha], [0, 1, 128]);
    if (r.status !== 0) throw movedMeanwhile(input);
    return;
  }
  const head = (await gitText(checkedOut.path, ['rev-parse', 'HEAD'])).stdout.trim();
  if (head !== input.targetSha) throw movedMeanwhile(input);
  const r = await gitText(checkedOut.path, ['merge', '--ff-only', '--quiet', to], [0, 1, 128], { ...process.env, GIT_REFLOG_ACTION: message });
  if (r.status === 0) return;
  const files = [...(r.stderr + r.stdout).matchAll(/^\s+(\S.*)$/gm)].map((m) => m[1]).filter((f) => !/^(Please|Aborting)/.test(f));
  if (/would be overwritten|untracked working tree files/.test(r.stderr))
    throw new TasksError(
      'E_DIRTY',
      `${checkedOut.path} has ${input.target} checked out with uncommitted changes to files the merge brings${files.length ? ` (${files.slice(0, 3).join(', ')})` : ''}; nothing was changed: commit or stash them, then 'tasks merge ${input.task}' again`,
      { id: input.task, path: checkedOut.path, files },
    );
  throw new TasksError('E_GIT', `git merge --ff-only in ${checkedOut.path} failed: ${(r.stderr.trim().split('\n').at(-1) ?? '').trim()}; nothing was changed`);
}

function movedMeanwhile(input: MergeInput): TasksError {
  return new TasksError('E_GIT', `${input.target} moved while #${input.task} was being merged; nothing was changed: run 'tasks merge ${input.task}' again`, {
    id: input.task,
    target: input.target,
  });
}

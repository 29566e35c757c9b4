import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { WORKTREE_OWNER_FILE } from '../owner.js';
import { locateGit } from './locate-git.js';
import { createBranchStatusReader, type BranchStatus } from './branch-status.js';
import { TasksError } from '../errors.js';
import type { Task, TaskStatus } from '../format/format.js';
import type { ClaimOptions, ClaimResult, TaskStore } from '../store.js';

/**
 * Git worktrees for claimed tasks (docs/protocol.md, "Claims"): `claim
 * --worktree` creates one on a branch named after the task and records
 * `metadata.worktree` and `metadata.branch`; the board itself stays in the
 * main worktree (docs/protocol.md, "Where the board is").
 */

/** Where a task's worktree lives and on which branch. */
export interface TaskWorktreePlan {
  task: number;
  path: string;
  branch: string;
}

/** A task's worktree as `tasks worktree list` shows it. */
export interface TaskWorktree extends TaskWorktreePlan {
  status: TaskStatus;
  owner: string;
  /** git knows the worktree and its folder exists. */
  exists: boolean;
  /** Uncommitted changes (untracked files included); undefined when it does not exist. */
  dirty?: boolean;
  /** Its branch against the merge target (docs/protocol.md, "The way back to main"); undefined without a target. */
  branchStatus?: BranchStatus;
}

export interface ClaimWorktreeOptions extends ClaimOptions {
  /** The worktree folder (default: `worktreeDir/task-N` of the board's config). */
  path?: string;
  /** What a new branch starts from (default: HEAD of the main worktree). */
  base?: string;
}

export interface WorktreeClaimResult extends ClaimResult {
  worktree: TaskWorktreePlan & { created: boolean };
}

/** Runs git; failures become E_GIT with git's own message. */
export function runGit(cwd: string, args: string[]): string {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    const message = stderr.split('\n').filter(Boolean).at(-1) ?? (error as Error).message;
    throw new TasksError('E_GIT', `git ${args.join(' ')} failed: ${message}`, { args }, { cause: error });
  }
}

/** The main worktree of the repository holding the board; E_GIT when the board is not in one. */
export function boardRepository(store: TaskStore): string {
  const git = locateGit(dirname(store.dir));
  if (!git) throw new TasksError('E_GIT', `the board ${store.dir} is not inside a git repository; worktrees need one ('git init' first)`);
  return git.mainRoot;
}

/** A file in a worktree's own git dir saying which task dotasks made it for. */
export const WORKTREE_TASK_FILE = 'tasks-task';

/**
 * A branch name (or start point) reaches git only as a value: one that starts
 * with `-` would be read as an option, and git's own rules refuse the rest.
 */
function checkRefName(repo: string, name: string, what: string): void {
  let ok = !name.startsWith('-');
  if (ok) {
    try {
      execFileSync('git', ['check-ref-format', '--branch', name], { cwd: repo, stdio: 'ignore' });
    } catch {
      ok = false;
    }
  }
  if (!ok)
    throw new TasksError('E_INVALID', `${what} gives ${JSON.stringify(name)}, which git does not accept as a branch name; change it in .tasks/config.json`, {
      name,
    });
}

/** The branch and folder a task's worktree gets from the board's config. */
export function planTaskWorktree(store: TaskStore, id: number, options: { path?: string; cwd?: string } = {}): TaskWorktreePlan {
  const main = boardRepository(store);
  const branch = store.config.branchPattern.replaceAll('{id}', String(id));
  checkRefName(main, branch, `"branchPattern" ${JSON.stringify(store.config.branchPattern)}`);
  const path = options.path
    ? resolve(options.cwd ?? process.cwd(), options.path)
    : resolve(main, store.config.worktreeDir.replaceAll('{repo}', basename(main)), `task-${id}`);
  return { task: id, path, branch };
}

interface GitWorktreeEntry {
  path: string;
  branch?: string;
}

/**
 * git stops on a worktree whose files it finds half-written or half-removed
 * (`failed to read .git/worktrees/task-1/commondir`) wherever it looks at
 * every worktree: `git worktree list`, and `git worktree add`, which checks
 * the new one's path and branch against the others before it writes
 * anything. Another process is adding or removing that worktree right now
 * (a worker's claim, a merge's scratch checkout), so the command is run
 * again for a while instead of failing; a worktree record a killed git left
 * half-written is still refused, in git's words, once the while is over.
 */
export const WORKTREE_RACE_RETRY_MS = 10_000;

/** Whether a failed git met another worktree's files in the middle of an add or a remove. */
export function isWorktreeListingRace(error: unknown): boolean {
  return error instanceof TasksError && error.code === 'E_GIT' && /(failed|unable) to read \S*worktrees[\\/]/.test(error.message);
}

/** `run()`, run again while it fails on another worktree's half-written files (isWorktreeListingRace). */
function pastWorktreeRace<T>(run: () => T): T {
  const until = Date.now() + WORKTREE_RACE_RETRY_MS;
  for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
    try {
      return run();
    } catch (error) {
      if (!isWorktreeListingRace(error) || Date.now() >= until) throw error;
      // A synchronous pause: the callers are synchronous, and the other git takes milliseconds.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, wait);
    }
  }
}

/** `git worktree list --porcelain`'s output, asked again while another worktree is being added or removed. */
function worktreeListing(repo: string): string {
  return pastWorktreeRace(() => runGit(repo, ['worktree', 'list', '--porcelain']));
}

/** `git worktree list --porcelain`, parsed. */
export function listGitWorktrees(repo: string): GitWorktreeEntry[] {
  const out: GitWorktreeEntry[] = [];
  let current: GitWorktreeEntry | undefined;
  for (const line of worktreeListing(repo).split('\n')) {
    if (line.startsWith('worktree ')) {
      current = { path: line.slice('worktree '.length) };
      out.push(current);
    } else if (line.startsWith('branch ') && current) {
      current.branch = line.slice('branch '.length).replace(/^refs\/heads\//, '');
    }
  }
  return out;
}

/** Whether `rev` names a commit in the repository. */
function isCommit(repo: string, rev: string): boolean {
  try {
    execFileSync('git', ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { cwd: repo, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function branchExists(repo: string, branch: string): boolean {
  try {
    execFileSync('git', ['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], { cwd: repo, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** True when the worktree has uncommitted changes, untracked files included. */
export function isWorktreeDirty(path: string): boolean {
  return runGit(path, ['status', '--porcelain', '--untracked-files=normal']).trim() !== '';
}

/**
 * Creates the worktree of a plan (reusing the branch, or the worktree itself
 * when it is already there) and records `owner` as the worktree's owner, so
 * commands run inside it act as the claimant.
 */
export function createTaskWorktree(store: TaskStore, plan: TaskWorktreePlan, options: { base?: string; owner?: string } = {}): boolean {
  const repo = boardRepository(store);
  const known = listGitWorktrees(repo).find((w) => resolve(w.path) === plan.path);
  let created = false;
  if (known) {
    if (known.branch !== plan.branch)
      throw new TasksError('E_GIT', `${plan.path} is already a worktree on ${known.branch ?? 'a detached HEAD'}, not ${plan.branch}; pick another --path`, {
        path: plan.path,
      });
  } else {
    if (existsSync(plan.path))
      throw new TasksError('E_GIT', `${plan.path} already exists and is not a worktree of this repository; pick another --path`, {
        path: plan.path,
      });
    if (options.base !== undefined && options.base.startsWith('-'))
      throw new TasksError('E_GIT', `--base ${JSON.stringify(options.base)} is not a commit; name a branch, tag or commit`, { base: options.base });
    const reuse = branchExists(repo, plan.branch);
    // A new branch starts from a commit; a repository without one has none to give (git's own message is
    // `fatal: not a valid object name: 'HEAD'`, after the worktrees folder was made).
    if (!reuse && !isCommit(repo, options.base ?? 'HEAD'))
      throw options.base === undefined
        ? new TasksError('E_GIT', 'the repository has no commit yet, so a worktree has nothing to start from: commit once, then run this again')
        : new TasksError('E_GIT', `--base ${JSON.stringify(options.base)} is not a commit; name a branch, tag or commit`, { base: options.base });
    const folder = dirname(plan.path);
    const madeFolder = !existsSync(folder);
    mkdirSync(folder, { recursive: true });
    try {
      // git refuses before it writes anything when another worktree is half-made; the branch is looked at again
      // each time all the same, so an attempt that got as far as making it is not refused for it on the next.
      pastWorktreeRace(() =>
        reuse || branchExists(repo, plan.branch)
          ? runGit(repo, ['worktree', 'add', plan.path, plan.branch])
          : runGit(repo, ['worktree', 'add', '-b', plan.branch, plan.path, options.base ?? 'HEAD']),
      );
    } catch (error) {
      // Nothing left behind: the worktrees folder made for this one goes again (when still empty).
      if (madeFolder)
        try {
          rmdirSync(folder);
        } catch {
          // not empty after all: something else is in it now
        }
      throw error;
    }
    created = true;
  }
  const gitDir = runGit(plan.path, ['rev-parse', '--absolute-git-dir']).trim();
  // Ours, for this task: `tasks worktree remove` removes only worktrees it made.
  if (created) writeFileSync(resolve(gitDir, WORKTREE_TASK_FILE), `${plan.task}\n`);
  if (options.owner) writeFileSync(resolve(gitDir, WORKTREE_OWNER_FILE), options.owner + '\n');
  return created;
}

/**
 * Claims a task (or the next ready one when `id` is undefined) and gives it a
 * worktree on its own branch; `metadata.worktree` and `metadata.branch` record
 * them. If the worktree cannot be made, a fresh claim is released again.
 */
export async function claimWithWorktree(store: TaskStore, id: number | undefined, options: ClaimWorktreeOptions): Promise<WorktreeClaimResult> {
  // Fail on a missing repository before claiming anything.
  boardRepository(store);
  const planned = id === undefined ? undefined : planTaskWorktree(store, id, { path: options.path });
  const lease = options.lease === null ? null : { ...options.lease, worktree: planned?.path };
  const claim = id === undefined ? await store.claimNext({ ...options, lease }) : await store.claimTask(id, { ...options, lease });
  const plan = planned ?? planTaskWorktree(store, claim.task.id, { path: options.path });
  let created: boolean;
  try {
    created = createTaskWorktree(store, plan, { base: options.base, owner: options.owner });
  } catch (error) {
    if (!claim.alreadyHeld) await store.releaseTask(claim.task.id, { actor: options.owner, reason: 'worktree_failed' }).catch(() => undefined);
    throw error;
  }
  if (!planned && claim.lease.expiresAt !== null) await store.heartbeat({ owner: options.owner, id: claim.task.id, worktree: plan.path });
  const meta = claim.task.metadata ?? {};
  let task: Task = claim.task;
  if (meta.worktree !== plan.path || meta.branch !== plan.branch) {
    const updated = await store.updateTask(claim.task.id, { metadata: { worktree: plan.path, branch: plan.branch } }, { actor: options.owner });
    task = updated.task;
  }
  return { ...claim, task, worktree: { ...plan, created } };
}

/** Every task that records a worktree, with what git says about it. */
export function listTaskWorktrees(store: TaskStore): TaskWorktree[] {
  const repo = boardRepository(store);
  const known = new Map(listGitWorktrees(repo).map((w) => [resolve(w.path), w]));
  const out: TaskWorktree[] = [];
  const tasks = store.loadBoard().tasks;
  const statuses = createBranchStatusReader(store.dir, () => store.config).read(tasks);
  for (const task of tasks) {
    const path = task.metadata?.worktree;
    if (typeof path !== 'string' || path === '') continue;
    const branch = typeof task.metadata?.branch === 'string' ? task.metadata.branch : (known.get(resolve(path))?.branch ?? '');
    const exists = known.has(resolve(path)) && existsSync(path);
    out.push({
      task: task.id,
      path,
      branch,
      status: task.status,
      owner: task.owner,
      exists,
      dirty: exists ? isWorktreeDirty(path) : undefined,
      branchStatus: statuses.get(task.id),
    });
  }
  return out;
}

/**
 * Removes a task's worktree (its branch stays: it holds the work) and drops
 * `metadata.worktree`. Refuses uncommitted changes unless `force`, and never
 * removes a worktree dotasks did not make for this task (a task file may
 * name any path: it is plain JSON that anyone can edit).
 */
export async function removeTaskWorktree(
  store: TaskStore,
  id: number,
  options: { force?: boolean; actor?: string } = {},
): Promise<{ task: Task; path: string; branch: string; removed: boolean }> {
  const repo = boardRepository(store);
  const task = store.getTask(id);
  const path = task.metadata?.worktree;
  if (typeof path !== 'string' || path === '') throw new TasksError('E_NOT_FOUND', `task #${id} has no worktree (see 'tasks worktree list')`, { id });
  const branch = typeof task.metadata?.branch === 'string' ? task.metadata.branch : '';
  const known = listGitWorktrees(repo).some((w) => resolve(w.path) === resolve(path));
  let removed = false;
  if (known && existsSync(path)) {
    const gitDir = runGit(path, ['rev-parse', '--absolute-git-dir']).trim();
    let madeFor: string | undefined;
    try {
      madeFor = readFileSync(resolve(gitDir, WORKTREE_TASK_FILE), 'utf8').trim();
    } catch {
      madeFor = undefined;
    }
    if (madeFor !== String(id))
      throw new TasksError(
        'E_INVALID',
        `${path} is not a worktree dotasks made for task #${id}${madeFor ? ` (it was made for #${madeFor})` : ''}; nothing was removed (remove it with 'git worktree remove' if you mean to)`,
        { id, path },
      );
    if (!options.force && isWorktreeDirty(path))
      throw new TasksError('E_DIRTY', `the worktree of task #${id} (${path}) has uncommitted changes; commit them, or add --force to throw them away`, {
        id,
        path,
      });
    runGit(repo, ['worktree', 'remove', ...(options.force ? ['--force'] : []), path]);
    removed = true;
  } else {
    // The folder was deleted by hand: let git forget it.
    runGit(repo, ['worktree', 'prune']);
  }
  const updated = await store.updateTask(id, { metadata: { worktree: null } }, { actor: options.actor });
  return { task: updated.task, path, branch, removed };
}

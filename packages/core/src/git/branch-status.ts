// Where a task's branch stands against its target (docs/protocol.md, "The
// way back to main"): commits ahead and behind, whether it merges cleanly
// (git merge-tree --write-tree, which writes no worktree and no ref), and
// whether it is merged. The tips come from the git folder's files
// (refs.ts), so a board that reads the statuses again and again asks git
// only about a branch or target that moved.
import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import type { BoardConfig } from '../board-config.js';
import { TasksError } from '../errors.js';
import type { Task } from '../format/format.js';
import { branchCreationPoint, branchTip, isPlainBranchName, repositoryDirs, targetTipIn, type RepositoryDirs } from './refs.js';

/** A task branch against its target. */
export interface BranchStatus {
  branch: string;
  target: string;
  /** The branch is there (a merged branch that `tasks merge` deleted is not). */
  exists: boolean;
  /** Commits on the branch that the target lacks. */
  ahead: number;
  /** Commits on the target that the branch lacks. */
  behind: number;
  /** It would merge without conflicts (also when there is nothing to merge, or a fast-forward). */
  clean: boolean;
  /** It has commits of its own and the target holds them all (or `tasks merge` recorded the merge). */
  merged: boolean;
}

/** What `metadata.merged` holds once `tasks merge` (or merged-means-done) completed a task by its merge. */
export interface MergedRecord {
  into: string;
  commit: string;
}

/** `ahead 3 · behind 1 · clean`, `… · conflicts`, `merged`: the short form the boards and `worktree list` show. */
export function describeBranchStatus(status: BranchStatus): string {
  if (status.merged) return 'merged';
  if (!status.exists) return 'branch gone';
  const counts = `ahead ${status.ahead} · behind ${status.behind}`;
  if (status.ahead === 0) return `${counts} · nothing to merge`;
  return `${counts} · ${status.clean ? 'clean' : 'conflicts'}`;
}

/** `↑2 ↓1`, `↑2 ↓1 conflicts`, `merged`, `gone`: the shortest form, for the boards' cards (docs/decisions.md, "Branch status on the cards"). */
export function shortBranchStatus(status: BranchStatus): string {
  if (status.merged) return 'merged';
  if (!status.exists) return 'gone';
  return `↑${status.ahead} ↓${status.behind}${status.clean ? '' : ' conflicts'}`;
}

/** The task's branch: `metadata.branch`, when it names one git accepts. */
export function taskBranch(task: Task): string | undefined {
  const branch = task.metadata?.branch;
  return typeof branch === 'string' && isPlainBranchName(branch) ? branch : undefined;
}

/** `metadata.merged`, when it is a record of ours. */
export function mergedRecordOf(task: Task): MergedRecord | undefined {
  const merged = task.metadata?.merged as Partial<MergedRecord> | undefined;
  return merged && typeof merged === 'object' && typeof merged.into === 'string' && typeof merged.commit === 'string'
    ? { into: merged.into, commit: merged.commit }
    : undefined;
}

/** The repository of a board; E_GIT outside git. */
export function boardRepositoryDirs(boardDir: string): RepositoryDirs {
  const repo = repositoryDirs(dirname(boardDir));
  if (!repo) throw new TasksError('E_GIT', `the board ${boardDir} is not inside a git repository; task branches need one`);
  return repo;
}

function git(cwd: string, args: string[]): { status: number; stdout: string } {
  try {
    return { status: 0, stdout: execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (error) {
    const e = error as { status?: number | null; stdout?: string; stderr?: string };
    if (typeof e.status === 'number' && e.status === 1) return { status: 1, stdout: String(e.stdout ?? '') };
    const said =
      String(e.stderr ?? '')
        .trim()
        .split('\n')
        .filter(Boolean)
        .at(-1) ?? (error as Error).message;
    throw new TasksError('E_GIT', `git ${args[0]} failed: ${said}`, { args }, { cause: error });
  }
}

/** Commits only `tip` has and commits only `target` has: `git rev-list --left-right --count`. */
export function aheadBehind(repo: string, targetSha: string, tip: string): { ahead: number; behind: number } {
  const [behind, ahead] = git(repo, ['rev-list', '--left-right', '--count', `${targetSha}...${tip}`])
    .stdout.trim()
    .split(/\s+/)
    .map(Number);
  return { ahead, behind };
}

/** Whether `tip` merges into `targetSha` without conflicts, and the files that conflict (git merge-tree --write-tree). */
export function mergesCleanly(repo: string, targetSha: string, tip: string): { clean: boolean; tree?: string; conflicts: string[] } {
  const r = git(repo, ['merge-tree', '--write-tree', '--name-only', '--no-messages', targetSha, tip]);
  const [tree, ...files] = r.stdout.split('\n').filter(Boolean);
  return r.status === 0 ? { clean: true, tree, conflicts: [] } : { clean: false, conflicts: files };
}

/** Everything a status depends on: a status is computed again only when one of these changed. */
interface StatusKey {
  branch: string;
  target: string;
  targetSha: string;
  tip: string | undefined;
  creation: string | undefined;
}

function computeStatus(repo: string, key: StatusKey): BranchStatus {
  const { branch, target, targetSha, tip, creation } = key;
  if (tip === undefined) return { branch, target, exists: false, ahead: 0, behind: 0, clean: true, merged: false };
  const { ahead, behind } = aheadBehind(repo, targetSha, tip);
  const clean = ahead === 0 || behind === 0 ? true : mergesCleanly(repo, targetSha, tip).clean;
  // A branch made from the target and not yet worked on is "reachable" too: merged needs commits of its own.
  const merged = ahead === 0 && creation !== undefined && creation !== tip;
  return { branch, target, exists: true, ahead, behind, clean, merged };
}

/** Reads branch statuses of tasks, asking git only about branches or a target that moved since it last looked. */
export interface BranchStatusReader {
  /** The status of every task with a branch (deleted tasks left out); empty outside git or with no target. */
  read(tasks: Iterable<Task>): Map<number, BranchStatus>;
  /** Whether the target or a branch the last read() asked about moved since (reads refs only; a poll's cheap question). */
  moved(): boolean;
}

const MAX_CACHED = 4096;

/** What the refs say now of `branches` against the board's merge target; undefined outside git or with no target. */
function lookAt(boardDir: string, config: BoardConfig, branches: readonly string[]): { repo: RepositoryDirs; keys: StatusKey[] } | undefined {
  const repo = repositoryDirs(dirname(boardDir));
  const now = repo && targetTipIn(repo, config);
  if (!repo || !now) return undefined;
  const { target, sha: targetSha } = now;
  const keys = branches.map((branch) => ({
    branch,
    target,
    targetSha,
    tip: branchTip(repo.commonDir, branch),
    creation: branchCreationPoint(repo.commonDir, branch),
  }));
  return { repo, keys };
}

/** Reads branch statuses of tasks, asking git only about branches or a target that moved since it last looked. */
export function createBranchStatusReader(boardDir: string, config: () => BoardConfig): BranchStatusReader {
  const cache = new Map<string, BranchStatus>();
  let asked: string[] = [];
  let seen = JSON.stringify(undefined);
  return {
    read(tasks) {
      const out = new Map<number, BranchStatus>();
      const withBranch: { task: Task; branch: string }[] = [];
      for (const task of tasks) {
        const branch = taskBranch(task);
        if (branch && task.status !== 'deleted') withBranch.push({ task, branch });
      }
      asked = [...new Set(withBranch.map((w) => w.branch))];
      const look = lookAt(boardDir, config(), asked);
      seen = JSON.stringify(look?.keys);
      if (!look) return out;
      const keyOf = new Map(look.keys.map((k) => [k.branch, k]));
      for (const { task, branch } of withBranch) {
        const key = keyOf.get(branch)!;
        const text = JSON.stringify(key);
        let status = cache.get(text);
        if (!status) {
          try {
            status = computeStatus(look.repo.mainRoot, key);
          } catch {
            continue; // git could not say (a ref gone meanwhile): left out this time
          }
          if (cache.size >= MAX_CACHED) cache.clear();
          cache.set(text, status);
        }
        out.set(task.id, mergedRecordOf(task) && !status.exists ? { ...status, merged: true } : status);
      }
      return out;
    },
    moved() {
      return JSON.stringify(lookAt(boardDir, config(), asked)?.keys) !== seen;
    },
  };
}

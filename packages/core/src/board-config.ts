import { TasksError, isErrnoException } from './errors.js';
import { findJsonSyntaxError, positionAt } from './format/json-locate.js';
import { stripBom } from './format/format.js';

// Builtins through getBuiltinModule, not ESM imports: the ESM facade of node:fs costs `tasks list`
// about 4 ms to build, and every module of the read path (read.ts) must do without it.
const { readFileSync } = process.getBuiltinModule('node:fs');
const { join } = process.getBuiltinModule('node:path');

/** Board settings from `.tasks/config.json` (all optional). */
export interface BoardConfig {
  /** An owner may hold one in-progress task at a time (default true). */
  singleInProgress: boolean;
  /** Lease length for claims made by working processes, seconds (default 900). */
  leaseSeconds: number;
  /** A lock not refreshed for this long is stale, seconds (default 10). */
  staleLockSeconds: number;
  /** Give up waiting for a lock after this long, seconds (default 30). */
  lockTimeoutSeconds: number;
  /**
   * Where `claim --worktree` puts worktrees, relative to the main worktree;
   * `{repo}` is the main worktree's folder name (default `../{repo}.worktrees`,
   * a sibling folder, so tools scanning the repository never see nested checkouts).
   */
  worktreeDir: string;
  /** The branch name for a task's worktree; `{id}` is replaced (default `task/{id}`). */
  branchPattern: string;
  /** The git remote `tasks sync` uses (default `origin`). */
  syncRemote: string;
  /** The branch of that remote that holds the board (default `tasks`). */
  syncBranch: string;
  /**
   * The board lives on its board branch and syncs (`tasks sync` sets it):
   * its task files are kept off the code branch (docs/decisions.md, "Where a
   * synced board lives"). Default false: the board is committed with the code.
   */
  sync: boolean;
  /**
   * The most characters of the board that a result of the agents' tool (and
   * `tasks prime`) carries: past it, the least urgent open work is counted
   * instead of listed (default 4000, about a thousand tokens; at least 500).
   */
  echoBudget: number;
  /**
   * Up to this many completed and deleted tasks, `tasks list` shows the
   * history line by line; beyond, `list`, `ready`, `search` and `show` read the
   * open work only and fold the history into one line (`--all` shows it;
   * docs/protocol.md, "A board's history"). Default 200; 0 always folds.
   */
  foldHistory: number;
  /**
   * The branch `tasks merge` brings task branches into, and that branch
   * status and merged-means-done measure them against (docs/protocol.md,
   * "The way back to main"). Default: the branch the main worktree has
   * checked out.
   */
  mergeTarget?: string;
  /** How `tasks merge` brings a branch in: a merge commit (default) or a rebase onto the target. */
  mergeStrategy: 'merge' | 'rebase';
  /** A task whose branch is merged into the target completes by itself (default false). */
  mergedMeansDone: boolean;
  /**
   * The board's check before done: a shell command that must exit 0 before a
   * task completes (docs/protocol.md, "Checks before done"); a task's own
   * `verify` replaces it. Default: none.
   */
  verify?: string;
  /** How long a check may run before it is stopped and counts as failed, seconds (default 600). */
  verifyTimeoutSeconds: number;
  /**
   * A parent completes by itself, in the same change, when its last open
   * child completes (docs/protocol.md, "Parents"). Default false: it waits
   * for someone to complete it.
   */
  completeParents: boolean;
  /**
   * Every task waits for review when it is finished, unless its own
   * `review.required` says otherwise (docs/protocol.md, "Review"). Default false.
   */
  review: boolean;
}

/** The smallest `echoBudget`: room for the summary, the fold lines and a few tasks. */
export const MIN_ECHO_BUDGET = 500;

export const DEFAULT_CONFIG: BoardConfig = {
  singleInProgress: true,
  leaseSeconds: 900,
  staleLockSeconds: 10,
  lockTimeoutSeconds: 30,
  worktreeDir: '../{repo}.worktrees',
  branchPattern: 'task/{id}',
  syncRemote: 'origin',
  syncBranch: 'tasks',
  sync: false,
  echoBudget: 4000,
  foldHistory: 200,
  mergeStrategy: 'merge',
  mergedMeansDone: false,
  verifyTimeoutSeconds: 600,
  completeParents: false,
  review: false,
};

const BOOLEAN_KEYS = ['singleInProgress', 'sync', 'completeParents', 'review'] as const;
const NUMBER_KEYS = ['leaseSeconds', 'staleLockSeconds', 'lockTimeoutSeconds', 'verifyTimeoutSeconds'] as const;
const STRING_KEYS = ['worktreeDir', 'branchPattern', 'syncRemote', 'syncBranch', 'verify'] as const;

/** Reads `config.json` of a board; a missing file means the defaults. */
export function readConfig(boardDir: string): BoardConfig {
  const file = join(boardDir, 'config.json');
  // Not fsio's readFileIfExists: fsio loads node:crypto, which the read path (`tasks list`) does without.
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (!isErrnoException(error, 'ENOENT')) throw error;
  }
  const config: BoardConfig = { ...DEFAULT_CONFIG };
  if (text === undefined) return config;
  let raw: unknown;
  try {
    raw = JSON.parse(stripBom(text));
  } catch {
    const problem = findJsonSyntaxError(text);
    const at = positionAt(text, problem?.offset ?? 0);
    throw new TasksError('E_INVALID', `${file}:${at.line}:${at.column}: invalid JSON: ${problem?.message ?? 'parse error'}`, { file });
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new TasksError('E_INVALID', `${file}: must hold a JSON object`, { file });
  const obj = raw as Record<string, unknown>;
  for (const key of BOOLEAN_KEYS) {
    const value = obj[key];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw new TasksError('E_INVALID', `${file}: "${key}" must be true or false`, { file });
    config[key] = value;
  }
  for (const key of NUMBER_KEYS) {
    const value = obj[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !(value > 0)) throw new TasksError('E_INVALID', `${file}: "${key}" must be a positive number of seconds`, { file });
    config[key] = value;
  }
  for (const key of STRING_KEYS) {
    const value = obj[key];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.trim() === '') throw new TasksError('E_INVALID', `${file}: "${key}" must be a non-empty string`, { file });
    config[key] = value;
  }
  if (obj.echoBudget !== undefined) {
    const value = obj.echoBudget;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < MIN_ECHO_BUDGET)
      throw new TasksError('E_INVALID', `${file}: "echoBudget" must be a whole number of characters, at least ${MIN_ECHO_BUDGET}`, { file });
    config.echoBudget = value;
  }
  if (obj.foldHistory !== undefined) {
    const value = obj.foldHistory;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
      throw new TasksError('E_INVALID', `${file}: "foldHistory" must be a whole number of tasks (0 or more)`, { file });
    config.foldHistory = value;
  }
  readMergeKeys(file, obj, config);
  return config;
}

/** The keys of the way back to main (docs/protocol.md, "The way back to main"). */
function readMergeKeys(file: string, obj: Record<string, unknown>, config: BoardConfig): void {
  if (obj.mergeTarget !== undefined) {
    if (typeof obj.mergeTarget !== 'string' || obj.mergeTarget.trim() === '')
      throw new TasksError('E_INVALID', `${file}: "mergeTarget" must be a branch name`, { file });
    config.mergeTarget = obj.mergeTarget;
  }
  if (obj.mergeStrategy !== undefined) {
    if (obj.mergeStrategy !== 'merge' && obj.mergeStrategy !== 'rebase')
      throw new TasksError('E_INVALID', `${file}: "mergeStrategy" must be "merge" or "rebase"`, { file });
    config.mergeStrategy = obj.mergeStrategy;
  }
  if (obj.mergedMeansDone !== undefined) {
    if (typeof obj.mergedMeansDone !== 'boolean') throw new TasksError('E_INVALID', `${file}: "mergedMeansDone" must be true or false`, { file });
    config.mergedMeansDone = obj.mergedMeansDone;
  }
}

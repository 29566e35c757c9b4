// The board's constants and the shapes the store takes and returns, apart from
// the store itself so the modules that implement it can share them.
import type { LeaseInput, Lease } from '../runtime/leases.js';
import type { TaskEvent } from '../events/events.js';
import type { Task, TaskStatus } from '../format/format.js';

export const RUNTIME_DIR = '.runtime';
export const BOARD_LOCK = '.board.lock';

/** The `.gitignore` that `tasks init` writes (docs/protocol.md, "Board files"). */
export const BOARD_GITIGNORE = `# Written by 'tasks init': locks, temp files and runtime state stay out of git.
*.lock
.tmp-*
.runtime/
`;

/** A task file that could not be read as a task, reported instead of skipped. */
export interface TaskProblem {
  file: string;
  id?: number;
  line?: number;
  column?: number;
  message: string;
}

/** Every task on the board at one moment, plus each file that is not a valid task. */
export interface BoardSnapshot {
  tasks: Task[];
  byId: Map<number, Task>;
  problems: TaskProblem[];
  /**
   * The board index's bytes these tasks are, when every task came from the
   * index or went into the one just written (indexKeyOf): a key for what is
   * derived from the whole board, such as the list summary's ready ids.
   * Absent when a file is read every time (its content is not in the index).
   */
  indexKey?: string;
  /**
   * Present when the closed tasks were not read (a board whose history is
   * folded, open-view.ts): `tasks` holds the open work, and the completed
   * and deleted tasks are only counted here.
   */
  history?: { completed: number; deleted: number };
}

/** Who acts, for ownership checks and events. */
export interface ActorOptions {
  actor?: string;
}

/** The fields a new task can start with. */
export interface CreateTaskInput {
  subject: string;
  description?: string;
  activeForm?: string;
  owner?: string;
  status?: TaskStatus;
  metadata?: Record<string, unknown>;
  blockedBy?: number[];
  blocks?: number[];
  /** The task the new one is part of (docs/protocol.md, "Parents"). */
  parent?: number;
  /** 0 (highest) to 4; absent or null: the default, 2. */
  priority?: number | null;
  labels?: string[];
  /** The task's file scope: globs relative to the top of the repository. */
  paths?: string[];
  /** The task's check before done: a shell command that must exit 0 (docs/protocol.md, "Checks before done"). */
  verify?: string;
  /** Whether finishing it waits for review (docs/protocol.md, "Review"): true, false (not even when the board requires it), absent: the board's rule. */
  review?: boolean;
  /** Soft links (docs/protocol.md, "Links"): tasks it is related to, and the tasks it was found while working on. */
  related?: number[];
  discoveredFrom?: number[];
  /**
   * Makes a retried create safe: kept in the task's `metadata.createKey`; a
   * create with a key some task already has returns that task, unchanged,
   * with `alreadyApplied` (a client that lost the answer, or cancelled the
   * call after the board had it, gets one task, not two).
   */
  key?: string;
}

/** A change to one task. `activeForm: null` removes it; a metadata value of null removes that key. */
export interface UpdateTaskInput {
  subject?: string;
  description?: string;
  activeForm?: string | null;
  owner?: string;
  status?: TaskStatus;
  metadata?: Record<string, unknown>;
  addBlockedBy?: number[];
  removeBlockedBy?: number[];
  addBlocks?: number[];
  removeBlocks?: number[];
  /** A new parent; null removes it (docs/protocol.md, "Parents"). */
  parent?: number | null;
  /** 0 (highest) to 4; null (or 2) sets the default, which the file then leaves out. */
  priority?: number | null;
  addLabels?: string[];
  removeLabels?: string[];
  /** Replaces the file scope; null (or an empty list) removes it. Applied before addPaths and removePaths. */
  paths?: string[] | null;
  addPaths?: string[];
  removePaths?: string[];
  /** The task's check before done; null (or "") removes it, and the board's applies again. */
  verify?: string | null;
  /** Whether finishing it waits for review (true), or not even when the board requires it (false). */
  review?: boolean;
  /** Soft links added and removed on both sides (docs/protocol.md, "Links"). */
  addRelated?: number[];
  removeRelated?: number[];
  addDiscoveredFrom?: number[];
  removeDiscoveredFrom?: number[];
}

/** Options of a change: who acts, and whether a task somebody else holds may be taken over. */
export interface UpdateOptions extends ActorOptions {
  force?: boolean;
}

/** One entry of a TodoWrite-style batch: with an id it replaces those fields, without one it creates. */
export interface BatchItem {
  id?: number;
  subject?: string;
  description?: string;
  status?: TaskStatus;
  activeForm?: string | null;
  owner?: string;
  blockedBy?: number[];
  /** The parent; null removes it. */
  parent?: number | null;
  metadata?: Record<string, unknown>;
  /** 0 (highest) to 4; null sets the default. */
  priority?: number | null;
  /** Replaces the task's labels. */
  labels?: string[];
}

/** What a mutation did. */
export interface MutationResult {
  /** The task the command was about, as written. */
  task: Task;
  /** Every task file written, ascending id. */
  written: Task[];
  /** Tasks whose blockedBy became empty through this mutation. */
  unblocked: number[];
  events: TaskEvent[];
  /** create with a `key` only: the key was a task's already, which is returned as it is and nothing was written. */
  alreadyApplied?: boolean;
  /** With `completeParents`: the parents this completion completed by themselves, nearest first. */
  completedParents?: number[];
}

/** Options for claims (docs/protocol.md, "Owners, claims and leases"). */
export interface ClaimOptions {
  owner: string;
  /** The lease to record; null records a claim that never expires. Default: a lease of the board's length. */
  lease?: LeaseInput | null;
  /** claimNext only: ids never to claim (e.g. tasks that kept failing for this worker). */
  exclude?: Iterable<number>;
}

export interface ClaimResult extends MutationResult {
  /** True when the claimant already held the task. */
  alreadyHeld: boolean;
  lease: Lease;
  /** An explicit claim of a task whose paths overlap tasks in progress: those tasks (the claim was made anyway). */
  overlaps?: ScopeOverlap[];
}

/** A task in progress whose file scope overlaps the one claimed (docs/protocol.md, "File scopes"). */
export interface ScopeOverlap {
  task: number;
  owner: string;
  paths: string[];
}

/** A task the reaper released, or would release with dryRun. */
export interface ReapedTask {
  task: number;
  owner: string;
  reason: 'expired' | 'process_gone';
  lease: Lease;
}

/**
 * What a worker is told and what it tells (`tasks worker`): its options
 * (the flags), the events it reports as it goes (one line each of `tasks
 * worker --json`), and the summary it ends with. worker.ts runs the loop.
 */
import type { ClaimLossReason, LastError, SyncOptions, TaskStore } from '@dotasks/core/internal';

/**
 * What both loops that run a command on claimed tasks take (`tasks worker`
 * and `tasks worker --review`): the board and who acts on it, the command and
 * where it runs, when to stop, and how the claim is held while it runs.
 */
export interface CommandLoopOptions {
  store: TaskStore;
  /** The owner every claim (and, reviewing, every verdict) is made as. */
  owner: string;
  /** The command run for each task: argv, or one string run by the shell (so `$TASK_SUBJECT` expands). */
  command: string[];
  /** Where the command runs for a task without a worktree (default: process.cwd()). */
  cwd?: string;
  /** The environment the command starts from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Stop after this many tasks were taken (done, failed, reviewed or lost). */
  maxTasks?: number;
  /** Stop after this many seconds with nothing to claim. */
  idleExitSeconds?: number;
  /** Lease length, seconds (default: the board's `leaseSeconds`); renewed while the command runs. */
  leaseSeconds?: number;
  /** How often to look at the board while waiting, ms (default 200). */
  pollMs?: number;
  /** Time the command's process group gets between SIGTERM and SIGKILL, ms (default 3000). */
  killGraceMs?: number;
  /**
   * How often to check, while the command runs, that the task is still ours
   * (not reaped, released or claimed by another), ms (default 500). A lost
   * task stops the command at once instead of at the next lease renewal.
   */
  claimCheckMs?: number;
  /** Aborting stops the command's whole process group, gives the claim back and ends the loop. */
  signal?: AbortSignal;
  /** The command's stdout and stderr as they come (default: dropped; the tail is kept for lastError). */
  onOutput?: (chunk: Buffer, task: number) => void;
}

/** What a worker does and how (the `tasks worker` flags). */
export interface WorkerOptions extends CommandLoopOptions {
  /** Claim each task with its own git worktree and run the command there. */
  worktree?: boolean;
  /** After this many failures of one task in this worker, leave it to others (default 2). */
  maxFailures?: number;
  /**
   * Work a board shared through a git remote (`tasks worker --sync`): each
   * claim counts once it is on the remote, and each completion or release is
   * synced as soon as it is made.
   */
  sync?: SyncOptions;
  /** Called with every worker event (see WorkerEvent). */
  onEvent?: (event: WorkerEvent) => void;
}

/** Why a worker stopped; `verify_failed`: a task whose check kept failing stays in progress for it, so it can take no other (single-in-progress). */
export type StopReason = 'drained' | 'max_tasks' | 'idle' | 'aborted' | 'verify_failed';

/** One line of `tasks worker --json`. Every event has `type`, `at` and `owner`. */
export type WorkerEvent = { at: string; owner: string } & (
  | { type: 'worker.started'; pid: number; command: string[] }
  | { type: 'worker.reaped'; tasks: { task: number; owner: string; reason: string }[] }
  | { type: 'worker.waiting'; inProgress: number[] }
  | { type: 'worker.sync_failed'; message: string }
  | { type: 'task.claimed'; task: number; subject: string; worktree?: string; branch?: string }
  | { type: 'task.completed'; task: number; durationMs: number; unblocked: number[]; outOfScope?: string[]; verify?: string; result?: boolean }
  /** The command exited 0 (and the check passed) on a task that requires review: it waits for someone else's approval now. */
  | { type: 'task.in_review'; task: number; durationMs: number; outOfScope?: string[]; verify?: string; result?: boolean }
  | { type: 'task.failed'; task: number; exitCode: number | null; signal: string | null; durationMs: number; retry: boolean; outOfScope?: string[] }
  | {
      type: 'task.verify_failed';
      task: number;
      command: string;
      exitCode: number | null;
      signal: string | null;
      timedOut: boolean;
      durationMs: number;
      /** The command runs on the task again at once; otherwise the worker gave up on it, and it stays in progress. */
      retry: boolean;
    }
  | { type: 'task.lost'; task: number; message: string; reason?: ClaimLossReason }
  | { type: 'task.moved'; task: number; from: number }
  | { type: 'task.interrupted'; task: number }
  | { type: 'worker.stopped'; reason: StopReason; completed: number[]; failed: number[]; gaveUp: number[]; lost: number[]; inReview?: number[] }
);

/** What a worker did. */
export interface WorkerSummary {
  owner: string;
  reason: StopReason;
  /** Tasks this worker completed, in order. */
  completed: number[];
  /** Every failed attempt's task id, in order (a task failing twice appears twice). */
  failed: number[];
  /** Tasks this worker stopped retrying after maxFailures. */
  gaveUp: number[];
  /** Tasks taken from this worker while it held them (reaped, released, claimed by another); it leaves them to others. */
  lost: number[];
  /** Tasks it finished into review (docs/protocol.md, "Review"), in order; absent when there were none. */
  inReview?: number[];
}

/** `metadata.lastError` of a task whose command failed (the same record a background job leaves). */
export type { LastError };

/**
 * One run of a command on a claimed task, as `tasks worker` and the
 * background jobs of `tasks run` both make it (docs/protocol.md, "Running
 * a task's command"): the claim is held while the command runs (its lease
 * renewed, its ownership watched, the command stopped the moment the task
 * is taken away), and the outcome is recorded in one transaction that first
 * checks, under the task's lock, that the task is still in progress for the
 * runner. Exit 0 completes it; anything else releases it with one failure
 * record, `metadata.lastError`, and a note.
 */
import { TasksError } from '../errors.js';
import { inReview } from '../format/format.js';
import type { TaskStore } from '../store.js';
import { watchClaim, type ClaimLoss, type ClaimWatch } from './claim-watch.js';

/** `metadata.lastError` of a task whose command failed. */
export interface LastError {
  exitCode: number | null;
  signal: string | null;
  at: string;
  owner: string;
  /** The end of the command's output (stdout and stderr interleaved). */
  tail: string;
  /** The background job that ran it (`tasks run`); absent for a worker. */
  job?: string;
  /** Stopped by `tasks kill`. */
  killed?: true;
}

// A note keeps less of the output than lastError: one is added per failure, and they stay in the file.
const NOTE_TAIL_LINES = 15;
const NOTE_TAIL_CHARS = 1200;

/** `worker: the command failed (exit 3)` and the last lines of its output: the note a failure leaves on the task. */
export function failureNote(error: LastError): string {
  const who = error.job ? `job ${error.job}` : 'worker';
  const how = error.killed ? 'killed by tasks kill' : error.signal ? `killed by ${error.signal}` : `exit ${error.exitCode}`;
  const tail = error.tail.split('\n').slice(-NOTE_TAIL_LINES).join('\n').slice(-NOTE_TAIL_CHARS);
  return `${who}: the command failed (${how})${tail.trim() ? `; its output ended:\n${tail}` : ', with no output'}`;
}

/** How a run ended, as recorded on the task. */
export type RunRecord =
  | { outcome: 'completed'; unblocked: number[] }
  /** Exit 0 on a task that requires review: it waits for review now (docs/protocol.md, "Review"). */
  | { outcome: 'review' }
  | { outcome: 'released'; lastError: LastError }
  /** The task was no longer the runner's when the outcome came (reaped, released, taken, moved away): left as it is. */
  | { outcome: 'lost'; message: string };

export interface RunEnd {
  /** The task (its id now, if a sync moved it while the command ran). */
  task: number;
  owner: string;
  exitCode: number | null;
  signal: string | null;
  /** The end of the command's output, for a failure. */
  tail: string;
  job?: string;
  killed?: boolean;
  /** More metadata to write with the outcome (the worker's `outOfScope`). */
  metadata?: Record<string, unknown>;
  /** The task's `result`, written with a completion (the worker's, from `$TASK_RESULT_FILE`). */
  result?: string;
}

/** Errors that mean "the task is not the runner's any more", not a failure of the board. */
function isLoss(error: unknown): error is TasksError {
  return (
    error instanceof TasksError && (error.code === 'E_NOT_OWNER' || error.code === 'E_NOT_FOUND' || error.code === 'E_TRANSITION' || error.code === 'E_MOVED')
  );
}

/**
 * Records how a run ended: exit 0 (and not killed) completes the task (or
 * puts it in review, when it requires review),
 * anything else releases it with `metadata.lastError` and a failure note;
 * both in one transaction that refuses unless the task is, under its lock,
 * still in progress for `owner` (`heldBy`). A task taken meanwhile is left
 * as it is and comes back as `lost`.
 */
export async function recordRunEnd(store: TaskStore, end: RunEnd): Promise<RunRecord> {
  const { task, owner } = end;
  try {
    if (end.exitCode === 0 && !end.killed) {
      const done = await store.completeTask(task, {
        actor: owner,
        heldBy: owner,
        ...(end.metadata ? { metadata: end.metadata } : {}),
        ...(end.result !== undefined ? { result: end.result } : {}),
      });
      return inReview(done.task) ? { outcome: 'review' } : { outcome: 'completed', unblocked: done.unblocked };
    }
    const lastError: LastError = {
      exitCode: end.exitCode,
      signal: end.signal,
      at: new Date().toISOString(),
      owner,
      tail: end.tail,
      ...(end.job ? { job: end.job } : {}),
      ...(end.killed ? { killed: true as const } : {}),
    };
    await store.releaseTask(task, {
      actor: owner,
      heldBy: owner,
      reason: end.killed ? 'killed' : 'failed',
      metadata: { lastError, ...end.metadata },
      // Also a note, in the same write: notes travel through git and show in diffs and in `tasks show`, where the next one looks.
      note: failureNote(lastError),
    });
    return { outcome: 'released', lastError };
  } catch (error) {
    if (isLoss(error)) return { outcome: 'lost', message: error.message };
    throw error;
  }
}

export interface HoldOptions {
  task: number;
  owner: string;
  /** The claim's `claimedAt` and the seq of its `claimed` event, from the claim result. */
  claimedAt: string;
  sinceSeq?: number;
  /** The lease's length, seconds (default: the board's); renewed every third of it, at most every `maxRenewMs`. */
  leaseSeconds?: number;
  maxRenewMs?: number;
  /** How often to check the task is still ours, ms (default 500). */
  checkMs?: number;
  /** The task was taken away: stop the command now. */
  onLost: (loss: ClaimLoss) => void;
  /** A sync moved the task, claim and all. */
  onMoved?: (to: number) => void;
  /** After each renewal (the worker publishes it with --sync). */
  afterRenew?: () => Promise<void>;
}

/** A claim held while a command runs. */
export interface HeldClaim {
  /** The task's id now. */
  readonly task: number;
  /** The loss, once seen. */
  readonly lost: ClaimLoss | undefined;
  /** Looks now: the command may have ended just as the task was taken. */
  check(): void;
  /** Stops renewing and watching. */
  stop(): void;
}

/**
 * Holds a claim while its command runs: renews the lease every third of its
 * length and watches the task, calling `onLost` the moment it is reaped,
 * released, claimed by another or completed by someone else; a refused
 * renewal makes it look at once.
 */
export function holdClaim(store: TaskStore, options: HoldOptions): HeldClaim {
  let task = options.task;
  const watch: ClaimWatch = watchClaim(
    store,
    { task, owner: options.owner, claimedAt: options.claimedAt },
    {
      intervalMs: options.checkMs ?? 500,
      sinceSeq: options.sinceSeq,
      onLost: options.onLost,
      onMoved: (to) => {
        task = to;
        options.onMoved?.(to);
      },
    },
  );
  const leaseMs = (options.leaseSeconds ?? store.config.leaseSeconds) * 1000;
  const every = Math.min(options.maxRenewMs ?? Infinity, Math.max(100, leaseMs / 3));
  const renew = setInterval(() => {
    store
      .heartbeat({ owner: options.owner, id: task, ...(options.leaseSeconds !== undefined ? { ttlSeconds: options.leaseSeconds } : {}) })
      .then(() => options.afterRenew?.())
      // A refused renewal means what the watch looks for: let it look now.
      .catch(() => watch.check());
  }, every);
  return {
    get task() {
      return task;
    },
    get lost() {
      return watch.lost;
    },
    check: () => void watch.check(),
    stop() {
      clearInterval(renew);
      watch.stop();
    },
  };
}

/**
 * Into review and out of it again (docs/protocol.md, "Review"): the steps
 * the finishing paths take inside their transaction. A task that requires
 * review is finished into `review.state: waiting` instead of completed: it
 * stays in progress for its owner, its claim record goes (a task in review
 * has no lease: nothing reaps it, and its owner may take the next task),
 * and it blocks its dependents until someone else approves it (review.ts).
 * Apart from review.ts, which closes tasks through closing.ts, so that
 * closing.ts and mutations.ts can call these without a cycle.
 */
import { TasksError } from '../errors.js';
import { inReview, isClosed, reviewRequired, type Task, type TaskReview } from '../format/format.js';
import type { BoardFiles } from './board-files.js';
import type { ActorOptions } from './store-types.js';
import type { Transaction } from './transaction.js';

/** Whether finishing `task` now puts it in review instead of completing it: it is open, and it or the board requires review. */
export function finishesIntoReview(board: BoardFiles, task: Task): boolean {
  return !isClosed(task.status) && reviewRequired(task, board.config.review);
}

/** The review without its state (what a task keeps of it when it enters review again, or leaves it). */
function withoutState(review: TaskReview | undefined): TaskReview {
  const rest: TaskReview = { ...review };
  for (const key of ['state', 'since', 'by', 'at'] as const) delete rest[key];
  return rest;
}

/**
 * Puts task `id` in review inside a transaction: in progress, `review:
 * {state: "waiting", since}`, its claim record dropped, a `review.waiting`
 * event. A task nobody owned becomes the finisher's (someone other than its
 * owner approves it, so it needs one). Idempotent: a task already waiting is
 * left as it is.
 */
export function enterReviewInTx(tx: Transaction, id: number, options: ActorOptions): void {
  const task = tx.edit(id);
  if (inReview(task)) return;
  if (task.owner === '' && options.actor) task.owner = options.actor;
  task.status = 'in_progress';
  task.review = { ...withoutState(task.review), state: 'waiting', since: new Date().toISOString() };
  tx.put(task);
  if (tx.readLease(id)) tx.dropLease(id);
  tx.event({ type: 'review.waiting', task: id, owner: options.actor, ...(task.owner !== options.actor ? { taskOwner: task.owner } : {}) });
}

/** A task that leaves review without a verdict (released, put back to pending by its owner): it waits no more. */
export function leaveReview(task: Task): void {
  if (task.review?.state !== 'waiting') return;
  const rest = withoutState(task.review);
  if (Object.keys(rest).length) task.review = rest;
  else delete task.review;
}

/** Sets whether a task requires review (`--review`, `--no-review`); undefined leaves it as it is. */
export function applyReviewRequired(task: Task, required: boolean | undefined): void {
  if (required === undefined) return;
  task.review = { ...task.review, required };
}

/**
 * What an update may not do to a task waiting for review: hand it to another
 * owner (who approves would change) or change whether it requires review;
 * approve or reject it first.
 */
export function assertReviewUntouched(task: Task, change: { owner?: string; review?: boolean }): void {
  if (!inReview(task)) return;
  const what =
    change.owner !== undefined && change.owner !== task.owner
      ? 'another owner'
      : change.review !== undefined && change.review !== task.review?.required
        ? 'a change of whether it requires review'
        : undefined;
  if (what === undefined) return;
  throw new TasksError(
    'E_TRANSITION',
    `task #${task.id} waits for review, which ${what} would change; approve it ('tasks approve ${task.id}') or reject it ('tasks reject ${task.id} --note …') first`,
    { id: task.id, review: true },
  );
}

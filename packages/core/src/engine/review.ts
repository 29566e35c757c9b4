/**
 * Review before done (docs/protocol.md, "Review"): the verdicts on a task
 * waiting for review, and the reviewer's claim that keeps two reviewers off
 * one task. Each one transaction under the task's lock (the board lock too
 * when an approval propagates). An approval completes the task as any
 * completion does (its dependents unblock); a rejection sends it back to
 * pending, still its owner's, with the reviewer's note. Nobody approves or
 * rejects their own task.
 */
import { ClaimError, TasksError } from '../errors.js';
import { inReview, type Task, type TaskReview } from '../format/format.js';
import { createLease, leaseExpiry, readLease, type Lease, type LeaseInput } from '../runtime/leases.js';
import { printable } from '../views/printable.js';
import type { BoardFiles } from './board-files.js';
import { loadBoardSnapshot } from './board-index.js';
import { closeInTx, parentsItMayComplete } from './closing.js';
import { parentsCompleted } from './parents.js';
import { appendNote, applyMetadata, checkNoteText } from './rules.js';
import type { ActorOptions, MutationResult } from './store-types.js';
import type { Transaction } from './transaction.js';

/** A reviewer's claim on a task in review, as claimReview made it. */
export interface ReviewClaim {
  /** The task as it was when the review was claimed. */
  task: Task;
  lease: Lease;
}

/** Who gives a verdict, and (a reviewer worker) the review claim it must still hold. */
export interface VerdictOptions extends ActorOptions {
  /** Refuse unless this reviewer's claim (its `claimedAt`) is still the task's record. */
  claim?: { owner: string; claimedAt: string };
}

/** An approval, and what it writes with the completion (a merge's `metadata.merged`). */
export interface ApproveOptions extends VerdictOptions {
  metadata?: Record<string, unknown>;
}

/** The tasks waiting for review, in the order they entered it (then by id): the review queue. */
export function reviewQueue(tasks: Iterable<Task>): Task[] {
  const waiting = [...tasks].filter(inReview);
  return waiting.sort((a, b) => (a.review!.since ?? '').localeCompare(b.review!.since ?? '') || a.id - b.id);
}

/** Why `actor` may not give a verdict on `task`: it does not wait for review, or it is the actor's own. */
function assertReviewable(tx: Transaction, task: Task, options: VerdictOptions): void {
  const id = task.id;
  if (!inReview(task)) {
    const standing =
      task.status === 'completed' && task.review?.state === 'approved' && task.review.by
        ? `completed, approved by ${printable(task.review.by)}`
        : task.status.replace('_', ' ');
    throw new TasksError('E_TRANSITION', `task #${id} does not wait for review (it is ${standing}); 'tasks review' lists what does`, {
      id,
      status: task.status,
      review: true,
    });
  }
  if (task.owner !== '' && options.actor === task.owner)
    throw new TasksError(
      'E_OWN_REVIEW',
      `task #${id} is ${printable(task.owner)}'s own work: someone other than ${printable(task.owner)} approves or rejects it`,
      { id, owner: task.owner },
    );
  if (options.claim) {
    const lease = tx.readLease(id);
    if (!lease?.review || lease.owner !== options.claim.owner || lease.claimedAt !== options.claim.claimedAt)
      throw new TasksError('E_NOT_OWNER', `the review of task #${id} is no longer ${printable(options.claim.owner)}'s (its claim lapsed or was taken)`, {
        id,
      });
  }
}

/** The review after a verdict: its requirement (and unknown keys) kept, the state, who and when. */
function verdict(review: TaskReview | undefined, state: 'approved' | 'rejected', by: string): TaskReview {
  const rest: TaskReview = { ...review };
  delete rest.since;
  return { ...rest, state, by, at: new Date().toISOString() };
}

/**
 * Approves a task waiting for review: `review: {state: "approved", by, at}`,
 * completed, and propagated (its dependents unblock), in one transaction; a
 * reviewer's claim on it goes with the completion.
 */
export async function approveTask(board: BoardFiles, id: number, options: ApproveOptions = {}): Promise<MutationResult> {
  const unblocked: number[] = [];
  const blocks = board.peekTask(id)?.blocks ?? [];
  const others = [...blocks, ...parentsItMayComplete(board, board.peekTask(id))];
  const result = await board.transact({ board: others.length > 0, tasks: [id, ...others] }, (tx) => {
    unblocked.length = 0;
    const task = tx.edit(id);
    assertReviewable(tx, task, options);
    task.review = verdict(task.review, 'approved', options.actor ?? '');
    if (options.metadata) applyMetadata(task, options.metadata);
    tx.put(task);
    tx.event({ type: 'review.approved', task: id, owner: options.actor, taskOwner: task.owner });
    for (const d of closeInTx(board, tx, id, 'completed', options)) unblocked.push(d);
  });
  return {
    task: result.written.find((t) => t.id === id) ?? board.getTask(id),
    written: result.written,
    unblocked,
    events: result.events,
    ...parentsCompleted(result.events),
  };
}

/**
 * Sends a task waiting for review back: pending, still assigned to its
 * owner (who knows the work, and whose worktree has it), `review: {state:
 * "rejected", by, at}`, and the reviewer's note, in one transaction.
 */
export async function rejectTask(board: BoardFiles, id: number, options: VerdictOptions & { note: string }): Promise<MutationResult> {
  const note = checkNoteText(options.note);
  const result = await board.transact({ tasks: [id] }, (tx) => {
    // Back to pending: its owner's claim --next may take it at once (board-index.ts).
    tx.refreshIndexOnCommit();
    const task = tx.edit(id);
    assertReviewable(tx, task, options);
    task.status = 'pending';
    task.review = verdict(task.review, 'rejected', options.actor ?? '');
    appendNote(task, { at: task.review.at!, owner: options.actor ?? '', text: `sent back in review: ${note}` });
    tx.put(task);
    if (tx.readLease(id)) tx.dropLease(id);
    tx.event({ type: 'review.rejected', task: id, owner: options.actor, taskOwner: task.owner });
  });
  return { task: result.written.find((t) => t.id === id) ?? board.getTask(id), written: result.written, unblocked: [], events: result.events };
}

/** A record on a task in review that keeps other reviewers off it: a reviewer's claim that has not run out. */
function liveReviewClaim(lease: Lease | undefined): boolean {
  return lease !== undefined && !leaseExpiry(lease);
}

/**
 * Claims the oldest task waiting for review that `owner` may review (not
 * its own, not claimed by a reviewer whose claim still holds, not in
 * `exclude`): a claim record `{…, review: true}` under the task's lock, so
 * of two reviewers exactly one gets each task. It expires as any lease
 * does (a crashed reviewer's task goes back to the queue). Throws
 * `nothing_ready` when there is none.
 */
export async function claimReview(board: BoardFiles, options: { owner: string; lease?: LeaseInput; exclude?: Iterable<number> }): Promise<ReviewClaim> {
  const { owner } = options;
  if (owner === '') throw new TasksError('E_INVALID', 'a review needs a reviewer (--owner or TASKS_OWNER)');
  const exclude = new Set(options.exclude ?? []);
  for (const seen of reviewQueue(loadBoardSnapshot(board.dir).tasks)) {
    if (seen.owner === owner || exclude.has(seen.id) || liveReviewClaim(readLease(board.runtimeDir, seen.id))) continue;
    const result = await board.transact({ tasks: [seen.id] }, (tx) => {
      const task = tx.tryRead(seen.id);
      if (!task || !inReview(task) || task.owner === owner || liveReviewClaim(tx.readLease(seen.id))) return undefined;
      const lease: Lease = { ...createLease(seen.id, owner, options.lease ?? {}, board.config.leaseSeconds), review: true };
      tx.putLease(lease);
      tx.event({ type: 'review.claimed', task: seen.id, owner, ...(lease.expiresAt ? { expiresAt: lease.expiresAt } : {}) });
      return { task, lease };
    });
    if (result.value) return result.value;
  }
  throw new ClaimError('nothing_ready', `nothing waits for review that ${printable(owner)} could review (see 'tasks review')`);
}

/** The reviewer's claim of `id` as it must still be: a review record of `owner`, made at `claimedAt`, on a task still in review. */
function assertReviewClaim(tx: Transaction, id: number, owner: string, claimedAt: string): Lease {
  const lease = tx.readLease(id);
  const task = tx.tryRead(id);
  if (!task || !inReview(task) || !lease?.review || lease.owner !== owner || lease.claimedAt !== claimedAt)
    throw new TasksError('E_NOT_OWNER', `the review of task #${id} is no longer ${printable(owner)}'s`, { id });
  return lease;
}

/** Renews a reviewer's claim for the length it was given (or `ttlSeconds`); E_NOT_OWNER when it is no longer the reviewer's. */
export async function renewReview(board: BoardFiles, options: { id: number; owner: string; claimedAt: string; ttlSeconds?: number }): Promise<Lease> {
  const result = await board.transact({ tasks: [options.id] }, (tx) => {
    const old = assertReviewClaim(tx, options.id, options.owner, options.claimedAt);
    const lease: Lease = {
      ...createLease(options.id, options.owner, { ttlSeconds: options.ttlSeconds ?? old.seconds, pid: old.pid }, board.config.leaseSeconds),
      review: true,
      claimedAt: old.claimedAt,
      renewedAt: new Date().toISOString(),
    };
    tx.putLease(lease);
    return lease;
  });
  return result.value;
}

/** Gives a review claim up without a verdict (a reviewer stopped): the task waits for the next reviewer at once. Quiet when it is no longer held. */
export async function releaseReview(board: BoardFiles, options: { id: number; owner: string; claimedAt: string }): Promise<boolean> {
  const result = await board.transact({ tasks: [options.id] }, (tx) => {
    const lease = tx.readLease(options.id);
    if (!lease?.review || lease.owner !== options.owner || lease.claimedAt !== options.claimedAt) return false;
    tx.dropLease(options.id);
    tx.event({ type: 'review.released', task: options.id, owner: options.owner });
    return true;
  });
  return result.value;
}

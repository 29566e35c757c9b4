/**
 * The reviewer worker (`tasks worker --review -- CMD`, docs/protocol.md,
 * "Review"): it works the review queue as the worker works the ready
 * tasks. It claims the oldest task waiting for review whose owner is not
 * its own (a reviewer's claim record, so two reviewers never take one
 * task), runs CMD on it with the task in its environment and the task's
 * worktree as its folder, holds the claim while CMD runs (renewed, and
 * CMD stopped the moment the task is taken away), and gives the verdict:
 * exit 0 approves the task, anything else sends it back to its owner with
 * the end of CMD's output as the note. It never approves its own owner's
 * work: the core refuses that, and the queue skips it.
 */
import { join } from 'node:path';
import {
  ClaimError,
  EVENTS_FILE,
  TasksError,
  checkTail,
  inReview,
  isClosed,
  mergeTask,
  readLastSeq,
  readLease,
  reviewRequired,
  taskBranch,
  taskWorktree,
  type ReviewClaim,
  type Task,
  type TaskStore,
} from '@dotasks/core/internal';
import { spawnCommand, taskEnv, type CommandExit, type RunningCommand } from './command.js';
import { waitForChange } from './waiting.js';
import type { CommandLoopOptions } from './worker-events.js';

/** What a reviewer worker does and how (`tasks worker --review`): the reviewer is the owner, the command is the review. */
export interface ReviewWorkerOptions extends CommandLoopOptions {
  /** Exit 0 lands the task (`tasks merge`, which approves it): its branch goes into the merge target; a merge that cannot be made sends it back. */
  merge?: boolean;
  onEvent?: (event: ReviewWorkerEvent) => void;
}

/** Why a reviewer worker stopped. */
export type ReviewStopReason = 'drained' | 'max_tasks' | 'idle' | 'aborted';

/** One line of `tasks worker --review --json`. Every event has `type`, `at` and `owner` (the reviewer). */
export type ReviewWorkerEvent = { at: string; owner: string } & (
  | { type: 'reviewer.started'; pid: number; command: string[] }
  | { type: 'reviewer.waiting'; inReview: number[] }
  | { type: 'review.claimed'; task: number; subject: string; taskOwner: string; worktree?: string }
  | { type: 'review.approved'; task: number; durationMs: number; unblocked: number[]; merged?: { into: string; commit: string } }
  | { type: 'review.rejected'; task: number; durationMs: number; exitCode: number | null; signal: string | null }
  | { type: 'review.lost'; task: number; message: string }
  | { type: 'review.interrupted'; task: number }
  | { type: 'reviewer.stopped'; reason: ReviewStopReason; approved: number[]; rejected: number[]; lost: number[] }
);

/** What a reviewer worker did. */
export interface ReviewSummary {
  owner: string;
  reason: ReviewStopReason;
  approved: number[];
  rejected: number[];
  /** Reviews taken from it while its command ran (approved or rejected by someone else, its claim lapsed). */
  lost: number[];
}

type EventBody = ReviewWorkerEvent extends infer E ? (E extends ReviewWorkerEvent ? Omit<E, 'at' | 'owner'> : never) : never;

/** What one reviewer worker keeps from start to stop. */
interface ReviewerState {
  readonly options: ReviewWorkerOptions;
  readonly store: TaskStore;
  readonly owner: string;
  readonly pollMs: number;
  readonly eventsFile: string;
  readonly summary: ReviewSummary;
  /** Tasks it no longer takes: lost while it reviewed them (someone else decided). */
  readonly excluded: Set<number>;
  taken: number;
  idleSince: number | undefined;
  waitingReported: boolean;
}

/** One review while its command runs. */
interface ReviewRun {
  readonly claim: ReviewClaim;
  readonly command: RunningCommand;
  readonly startedAt: number;
  lost?: string;
}

/**
 * The reviewer loop: claim the oldest task waiting for review that is not
 * its owner's, run the command on it, approve on exit 0 and reject with the
 * output's tail otherwise; repeat until nothing can come to review (or
 * maxTasks, idle time, the abort signal).
 */
export async function runReviewWorker(options: ReviewWorkerOptions): Promise<ReviewSummary> {
  if (options.command.length === 0) throw new TasksError('E_USAGE', 'a reviewer worker needs a command to run for each review (after --)');
  if (options.owner === '') throw new TasksError('E_USAGE', 'a reviewer worker needs an owner (--owner or TASKS_OWNER)');
  const { store, owner } = options;
  const state: ReviewerState = {
    options,
    store,
    owner,
    pollMs: options.pollMs ?? 200,
    eventsFile: join(store.runtimeDir, EVENTS_FILE),
    summary: { owner, reason: 'drained', approved: [], rejected: [], lost: [] },
    excluded: new Set(),
    taken: 0,
    idleSince: undefined,
    waitingReported: false,
  };
  emit(state, { type: 'reviewer.started', pid: process.pid, command: options.command });
  for (;;) {
    const step = await nextReview(state);
    if ('stop' in step) {
      state.summary.reason = step.stop;
      const { approved, rejected, lost } = state.summary;
      emit(state, { type: 'reviewer.stopped', reason: step.stop, approved, rejected, lost });
      return state.summary;
    }
    if (!('claim' in step)) continue;
    state.idleSince = undefined;
    state.waitingReported = false;
    state.taken++;
    await review(state, step.claim);
  }
}

function emit(state: ReviewerState, body: EventBody): void {
  state.options.onEvent?.({ at: new Date().toISOString(), owner: state.owner, ...body } as ReviewWorkerEvent);
}

const isBusy = (error: unknown) => error instanceof TasksError && (error.code === 'E_LOCKED' || error.code === 'E_COMPROMISED');

/** One pass: stop if told to, let lapsed claims go (a crashed reviewer's), then claim the next review or wait. */
async function nextReview(state: ReviewerState): Promise<{ claim: ReviewClaim } | { stop: ReviewStopReason } | { again: true }> {
  const { options, store, owner } = state;
  if (options.signal?.aborted) return { stop: 'aborted' };
  if (options.maxTasks !== undefined && state.taken >= options.maxTasks) return { stop: 'max_tasks' };
  await store.reap({ actor: owner }).catch((error: unknown) => {
    if (!isBusy(error)) throw error;
  });
  const seq = readLastSeq(state.eventsFile);
  try {
    return { claim: await store.claimReview({ owner, lease: { ttlSeconds: options.leaseSeconds, pid: process.pid }, exclude: state.excluded }) };
  } catch (error) {
    if (!isBusy(error) && !(error instanceof ClaimError && error.reason === 'nothing_ready')) throw error;
  }
  const coming = reviewsComing(state);
  if (coming === undefined) return { stop: 'drained' };
  state.idleSince ??= Date.now();
  if (options.idleExitSeconds !== undefined && Date.now() - state.idleSince >= options.idleExitSeconds * 1000) return { stop: 'idle' };
  if (!state.waitingReported) emit(state, { type: 'reviewer.waiting', inReview: coming });
  state.waitingReported = true;
  await waitForChange(state.eventsFile, seq, state.pollMs, options.signal);
  return { again: true };
}

/**
 * The tasks a review may still come from (those waiting for review, by id),
 * or undefined when none can: no open task that requires review belongs to
 * anyone but this reviewer (one it lost is left to whoever took it).
 */
function reviewsComing(state: ReviewerState): number[] | undefined {
  const { tasks } = state.store.loadBoard();
  const boardReview = state.store.config.review;
  const open = tasks.filter(
    (t) => !isClosed(t.status) && (inReview(t) || reviewRequired(t, boardReview)) && t.owner !== state.owner && !state.excluded.has(t.id),
  );
  return open.length ? open.filter(inReview).map((t) => t.id) : undefined;
}

/** Runs the review command on a claimed task and gives the verdict by how it ended. */
async function review(state: ReviewerState, claim: ReviewClaim): Promise<void> {
  const { options, store } = state;
  const task = claim.task;
  const worktree = taskWorktree(store, task);
  emit(state, { type: 'review.claimed', task: task.id, subject: task.subject, taskOwner: task.owner, ...(worktree ? { worktree } : {}) });
  const command = spawnCommand(options.command, {
    cwd: worktree ?? options.cwd,
    env: reviewEnv(state, task, worktree),
    killGraceMs: options.killGraceMs,
    onOutput: (chunk) => options.onOutput?.(chunk, task.id),
  });
  const run: ReviewRun = { claim, command, startedAt: Date.now() };
  const exit = await holdWhileRunning(state, run);
  const durationMs = Date.now() - run.startedAt;
  if (run.lost !== undefined) return lost(state, task.id, run.lost);
  if (options.signal?.aborted) {
    await store.releaseReview({ id: task.id, owner: state.owner, claimedAt: claim.lease.claimedAt }).catch(() => undefined);
    return void emit(state, { type: 'review.interrupted', task: task.id });
  }
  await giveVerdict(state, run, exit, durationMs);
}

/** Approves on exit 0, rejects otherwise; a review taken meanwhile (decided by someone else, its claim lapsed) is lost, not an error. */
async function giveVerdict(state: ReviewerState, run: ReviewRun, exit: CommandExit, durationMs: number): Promise<void> {
  const { store, owner, summary } = state;
  const id = run.claim.task.id;
  const claim = { owner, claimedAt: run.claim.lease.claimedAt };
  try {
    const refused = exit.code === 0 ? await approve(state, run, durationMs) : rejectionNote(exit, run.command.tail());
    if (refused === undefined) return;
    await store.rejectTask(id, { actor: owner, claim, note: refused });
    summary.rejected.push(id);
    emit(state, { type: 'review.rejected', task: id, durationMs, exitCode: exit.code, signal: exit.signal });
  } catch (error) {
    if (error instanceof TasksError && ['E_NOT_OWNER', 'E_TRANSITION', 'E_NOT_FOUND', 'E_OWN_REVIEW'].includes(error.code))
      return lost(state, id, error.message);
    throw error;
  }
}

/** What keeps a merge from being made, which the task's owner fixes on its branch: the reviewer sends it back with the reason. */
const MERGE_REFUSALS = ['E_CONFLICT', 'E_VERIFY', 'E_DIRTY', 'E_INVALID', 'E_BLOCKED'];

/**
 * Approves the task (with `merge`, and a branch, by merging it: the merge
 * approves and completes it in one transaction); returns the note to send it
 * back with when the merge cannot be made, undefined once it is approved.
 */
async function approve(state: ReviewerState, run: ReviewRun, durationMs: number): Promise<string | undefined> {
  const { store, owner, summary, options } = state;
  const id = run.claim.task.id;
  if (options.merge && taskBranch(store.peekTask(id) ?? run.claim.task) !== undefined) {
    // The merge runs the check on the merged result, which may outlast the lease: the claim is renewed meanwhile,
    // and a renewal refused (the task completed by the merge, or taken) changes nothing here.
    const renew = renewReviewClaim(state, run, () => undefined);
    try {
      // From the reviewer's folder, not the task's worktree: the merge removes the worktree and its branch.
      const merged = await mergeTask(store, id, { actor: owner, cwd: options.cwd ?? process.cwd() });
      summary.approved.push(id);
      const record = { into: merged.target, commit: merged.to };
      return void emit(state, { type: 'review.approved', task: id, durationMs, unblocked: merged.unblocked, merged: record });
    } catch (error) {
      if (error instanceof TasksError && MERGE_REFUSALS.includes(error.code)) return `the merge failed: ${error.message}`;
      throw error;
    } finally {
      clearInterval(renew);
    }
  }
  const result = await store.approveTask(id, { actor: owner, claim: { owner, claimedAt: run.claim.lease.claimedAt } });
  summary.approved.push(id);
  emit(state, { type: 'review.approved', task: id, durationMs, unblocked: result.unblocked });
  return undefined;
}

/** The note a failed review leaves for the task's owner: how the command ended and the end of its output (bounded, escapes removed). */
export function rejectionNote(exit: CommandExit, output: string): string {
  const how = exit.signal ? `killed by ${exit.signal}` : `exit ${exit.code}`;
  const tail = checkTail(output);
  return tail.trim() ? `the review command failed (${how}); its output ended:\n${tail}` : `the review command failed (${how}), with no output`;
}

function lost(state: ReviewerState, id: number, message: string): void {
  state.summary.lost.push(id);
  state.excluded.add(id);
  emit(state, { type: 'review.lost', task: id, message });
}

/**
 * Waits for the command while holding the review claim: renewed every
 * third of its lease, and looked at every claimCheckMs; a task no longer in
 * review, or a claim that is no longer ours, stops the command at once.
 */
async function holdWhileRunning(state: ReviewerState, run: ReviewRun): Promise<CommandExit> {
  const { options, store, owner } = state;
  const id = run.claim.task.id;
  const claimedAt = run.claim.lease.claimedAt;
  const look = () => {
    if (run.lost !== undefined) return;
    const task = store.peekTask(id);
    const lease = readLease(store.runtimeDir, id);
    if (task && inReview(task) && lease?.review && lease.owner === owner && lease.claimedAt === claimedAt) return;
    run.lost = `the review of task #${id} was taken from ${owner} (${task ? (inReview(task) ? 'its claim lapsed or was taken' : `it is ${task.status.replace('_', ' ')} now`) : 'its file is gone'})`;
    void run.command.kill();
  };
  const renew = renewReviewClaim(state, run, look);
  const watch = setInterval(look, options.claimCheckMs ?? 500);
  const onAbort = () => void run.command.kill();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const exit = await run.command.exited;
    look();
    return exit;
  } finally {
    clearInterval(renew);
    clearInterval(watch);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** Renews the review claim every third of its lease until cleared; a renewal refused calls `refused`. */
function renewReviewClaim(state: ReviewerState, run: ReviewRun, refused: () => void): NodeJS.Timeout {
  const { options, store, owner } = state;
  const leaseMs = (options.leaseSeconds ?? store.config.leaseSeconds) * 1000;
  const claim = { id: run.claim.task.id, owner, claimedAt: run.claim.lease.claimedAt };
  return setInterval(
    () => {
      store.renewReview({ ...claim, ...(options.leaseSeconds !== undefined ? { ttlSeconds: options.leaseSeconds } : {}) }).catch(refused);
    },
    Math.max(100, leaseMs / 3),
  );
}

/** The review command's environment: the task as a worker's command gets it, its owner as TASK_AUTHOR, its result, and the reviewer as TASKS_OWNER. */
function reviewEnv(state: ReviewerState, task: Task, worktree: string | undefined): NodeJS.ProcessEnv {
  return {
    ...taskEnv(state.options, task),
    TASK_AUTHOR: task.owner,
    TASK_REVIEW: '1',
    ...(task.result !== undefined ? { TASK_RESULT: task.result } : {}),
    ...(worktree ? { TASK_WORKTREE: worktree } : {}),
  };
}

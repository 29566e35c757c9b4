/**
 * The worker loop (`tasks worker`, runWorker): claim the next ready task,
 * run the command on it while holding the claim, settle the task by how the
 * run ended, and go on until nothing can become ready for this owner. What
 * it is told and tells is worker-events.ts's; waiting for work, waiting.ts's.
 */
import { join } from 'node:path';
import {
  ClaimError,
  EVENTS_FILE,
  TasksError,
  claimWithSync,
  claimWithWorktree,
  completeMergedTasks,
  readLastSeq,
  syncBoard,
  holdClaim,
  recordCheckFailure,
  recordRunEnd,
  type CheckRun,
  type HoldOptions,
  type ClaimLoss,
  type ClaimResult,
  type Task,
  type TaskStore,
} from '@dotasks/core/internal';
import { MAX_OUT_OF_SCOPE, filesOutOfScope, scopeBaseline, type ScopeBaseline } from './out-of-scope.js';
import { spawnCommand, taskEnv, type CommandExit, type RunningCommand } from './command.js';
import { checkHeld, prepareAttempt } from './verify.js';
import { waitForChange, waitingOn } from './waiting.js';
import type { StopReason, WorkerEvent, WorkerOptions, WorkerSummary } from './worker-events.js';

type EventBody = WorkerEvent extends infer E ? (E extends WorkerEvent ? Omit<E, 'at' | 'owner'> : never) : never;

/** A claim as the worker gets it: with its worktree when it made one. */
type WorkerClaim = ClaimResult & { worktree?: { path: string; branch: string } };

/**
 * What one worker keeps from start to stop, passed to each step of the
 * loop (execa's way: named steps over explicit state, not one closure).
 */
interface WorkerState {
  readonly options: WorkerOptions;
  readonly store: TaskStore;
  readonly owner: string;
  readonly pollMs: number;
  readonly maxFailures: number;
  readonly eventsFile: string;
  readonly summary: WorkerSummary;
  /** Failed attempts per task in this worker. */
  readonly failures: Map<number, number>;
  /** Tasks this worker no longer claims: given up on, or taken from it. */
  readonly excluded: Set<number>;
  /** Tasks taken (done or failed), for maxTasks. */
  taken: number;
  /** When the worker last found nothing to claim, while it keeps finding nothing. */
  idleSince: number | undefined;
  /** `worker.waiting` is said once per stretch of waiting. */
  waitingReported: boolean;
  /** With --sync: a task's outcome is on this board but not yet on the remote. */
  unpublished: boolean;
  /** Tasks whose check kept failing, left in progress for this worker's owner. */
  readonly kept: number[];
}

/** One task while its command runs: the id follows a sync that moves it. */
interface TaskRun {
  readonly claim: WorkerClaim;
  id: number;
  readonly command: RunningCommand;
  readonly startedAt: number;
  /** Resolves once the command's group is stopped after the task was taken from us. */
  stopped: Promise<void>;
}

/** What one pass of the loop came to. */
type LoopStep = { claim: WorkerClaim } | { stop: StopReason } | 'again';

/**
 * The worker loop (`tasks worker`): claim the next ready task, run the
 * command on it with TASK_* in its environment while renewing the lease,
 * complete it on exit 0 or release it with `metadata.lastError` otherwise,
 * and repeat until nothing is ready and nothing in progress can make more
 * ready (or maxTasks, idle time, or the abort signal). Uses only the core's
 * public API, so any program can run one.
 */
export async function runWorker(options: WorkerOptions): Promise<WorkerSummary> {
  const state = createWorkerState(options);
  emit(state, { type: 'worker.started', pid: process.pid, command: options.command });
  for (;;) {
    const step = await nextStep(state);
    if (step === 'again') continue;
    if ('stop' in step) return stopWorker(state, step.stop);
    state.idleSince = undefined;
    state.waitingReported = false;
    state.taken++;
    await workOn(state, step.claim);
    // With --sync the outcome goes out with a later claim's push, batched (claim-sync.ts, publish: 'later'): the
    // branch is pushed at most every 10 s, not once per task. Whatever else ends the loop publishes first.
    state.unpublished = !!options.sync;
  }
}

function createWorkerState(options: WorkerOptions): WorkerState {
  if (options.command.length === 0) throw new TasksError('E_USAGE', 'a worker needs a command to run for each task (after --)');
  if (options.owner === '') throw new TasksError('E_USAGE', 'a worker needs an owner (--owner or TASKS_OWNER)');
  const { store, owner } = options;
  return {
    options,
    store,
    owner,
    pollMs: options.pollMs ?? 200,
    maxFailures: options.maxFailures ?? 2,
    eventsFile: join(store.runtimeDir, EVENTS_FILE),
    summary: { owner, reason: 'drained', completed: [], failed: [], gaveUp: [], lost: [] },
    failures: new Map(),
    excluded: new Set(),
    taken: 0,
    idleSince: undefined,
    waitingReported: false,
    unpublished: false,
    kept: [],
  };
}

function emit(state: WorkerState, body: EventBody): void {
  state.options.onEvent?.({ at: new Date().toISOString(), owner: state.owner, ...body } as WorkerEvent);
}

/** A lock held too long by a busy or dying process: the board is looked at again shortly. */
function isBusy(error: unknown): boolean {
  return error instanceof TasksError && (error.code === 'E_LOCKED' || error.code === 'E_COMPROMISED');
}

/** One pass: stop if told to, reap what expired, then claim the next task or wait for the board to change. */
async function nextStep(state: WorkerState): Promise<LoopStep> {
  const { options, store, owner } = state;
  if (options.signal?.aborted) return { stop: 'aborted' };
  if (options.maxTasks !== undefined && state.taken >= options.maxTasks) return { stop: 'max_tasks' };
  if (holdsKeptTask(state)) return { stop: 'verify_failed' };
  const reaped = await store.reap({ actor: owner }).catch((error: unknown) => {
    if (isBusy(error)) return [];
    throw error;
  });
  if (reaped.length) emit(state, { type: 'worker.reaped', tasks: reaped.map(({ task, owner: o, reason }) => ({ task, owner: o, reason })) });

  const seqBefore = readLastSeq(state.eventsFile);
  try {
    return { claim: await claimNextTask(state) };
  } catch (error) {
    if (isBusy(error)) {
      await waitForChange(state.eventsFile, seqBefore, state.pollMs, options.signal);
      return 'again';
    }
    // With --sync, a remote that is down or busy for a while is waited out, not a reason to stop.
    if (options.sync && error instanceof TasksError && error.code === 'E_GIT') {
      emit(state, { type: 'worker.sync_failed', message: error.message });
      await waitForChange(state.eventsFile, seqBefore, Math.max(state.pollMs, 1000), options.signal);
      return 'again';
    }
    if (!(error instanceof ClaimError) || error.reason !== 'nothing_ready') throw error;
    return waitForWork(state, seqBefore);
  }
}

/** Claims the next ready task the way the flags say: through the remote, with a worktree, or on this board. */
async function claimNextTask(state: WorkerState): Promise<WorkerClaim> {
  const { options, store, owner, excluded: exclude } = state;
  // Merged means done (docs/protocol.md, "The way back to main"): what the target holds completes first, so its
  // dependents can be claimed; a look that fails (git busy, a lock) is tried again before the next claim.
  await completeMergedTasks(store, { actor: owner }).catch((error: unknown) => {
    if (!(error instanceof TasksError)) throw error;
  });
  const lease = { ttlSeconds: options.leaseSeconds, pid: process.pid };
  // The claim is decided by its ref on the remote; the board branch gets it, and this worker's last outcome, with a
  // later push (claim-sync.ts, publish: 'later'), so claims of different tasks from different machines never wait in line.
  if (options.sync) return claimWithSync(store, undefined, { owner, lease, exclude, sync: options.sync, publish: 'later' });
  if (options.worktree) return claimWithWorktree(store, undefined, { owner, lease, exclude });
  return store.claimNext({ owner, lease, exclude });
}

/** Nothing to claim: stop when waiting is pointless or too long, otherwise wait for the board to change. */
async function waitForWork(state: WorkerState, seqBefore: number): Promise<LoopStep> {
  const { options } = state;
  // Nothing to claim here: the last completion goes out now instead of with the next claim.
  if (state.unpublished) await publish(state);
  const inProgress = waitingOn(state.store, state.owner, state.excluded);
  if (inProgress === undefined) return { stop: 'drained' };
  state.idleSince ??= Date.now();
  if (options.idleExitSeconds !== undefined && Date.now() - state.idleSince >= options.idleExitSeconds * 1000) return { stop: 'idle' };
  if (!state.waitingReported) emit(state, { type: 'worker.waiting', inProgress });
  state.waitingReported = true;
  await waitForChange(state.eventsFile, seqBefore, state.pollMs, options.signal);
  return 'again';
}

/** Sends a completion or release to the remote; a remote that is down now gets it with the next sync. */
async function publish(state: WorkerState): Promise<void> {
  state.unpublished = false;
  try {
    await syncBoard(state.store, state.options.sync);
  } catch (error) {
    if (!(error instanceof TasksError)) throw error;
  }
}

async function stopWorker(state: WorkerState, reason: StopReason): Promise<WorkerSummary> {
  const { summary } = state;
  if (state.unpublished) await publish(state);
  summary.reason = reason;
  const { completed, failed, gaveUp, lost, inReview } = summary;
  emit(state, { type: 'worker.stopped', reason, completed, failed, gaveUp, lost, ...(inReview ? { inReview } : {}) });
  return summary;
}

/** Runs the command on a claimed task and settles the task by how the run ended; a failing check runs it again on the task. */
async function workOn(state: WorkerState, claim: WorkerClaim): Promise<void> {
  const task = claim.task;
  emit(state, {
    type: 'task.claimed',
    task: task.id,
    subject: task.subject,
    ...(claim.worktree ? { worktree: claim.worktree.path, branch: claim.worktree.branch } : {}),
  });
  let next: Retry | undefined = { id: task.id };
  while (next) next = await attempt(state, claim, next);
}

/** The task (its id now) and the check that failed on the last run, for the next run of the command. */
interface Retry {
  id: number;
  failedCheck?: CheckRun;
}

/**
 * One run of the command and its settling: exit 0 runs the task's check
 * (still holding the claim), and a passing check (or none) completes the
 * task with the result the command left; a failing one leaves it in
 * progress and asks for another run, until the worker gives up on it.
 */
async function attempt(state: WorkerState, claim: WorkerClaim, retry: Retry): Promise<Retry | undefined> {
  const { options, store } = state;
  let task: Task;
  try {
    // Read again for a run after a failing check: the command may have changed the task (its check, its paths).
    task = retry.failedCheck ? store.getTask(retry.id) : claim.task;
  } catch (error) {
    return void lose(state, retry.id, error);
  }
  // A task with paths: note the checkout now, to tell afterwards what the command changed outside them.
  const baseline = task.paths?.length ? await scopeBaseline(claim.worktree?.path ?? options.cwd ?? process.cwd()) : undefined;
  const files = prepareAttempt(store, task, retry.failedCheck);
  try {
    const startedAt = Date.now();
    const command = startCommand(state, task, claim.worktree?.path, files.env);
    const run: TaskRun = { claim, id: task.id, command, startedAt, stopped: Promise.resolve() };
    const { exit, loss } = await awaitCommand(state, run);
    if (loss) return void (await settleLost(state, run, loss, Date.now() - startedAt));
    if (options.signal?.aborted) return void (await settleInterrupted(state, run.id));
    const scope = baseline ? await outOfScope(store, baseline, task) : undefined;
    const check =
      exit.code === 0
        ? await checkHeld(store, run.id, { owner: state.owner, env: options.env ?? process.env, hold: holdOptions(state, run), signal: options.signal })
        : {};
    const durationMs = Date.now() - startedAt;
    if (check.loss) return void (await settleLost(state, run, check.loss, durationMs));
    if (check.run?.interrupted || options.signal?.aborted) return void (await settleInterrupted(state, run.id));
    if (check.run && !check.run.passed) return settleCheckFailed(state, run.id, check.run, durationMs);
    await settleExit(state, run, exit, durationMs, scope, { result: exit.code === 0 ? files.readResult() : undefined, verify: check.run?.command });
    return undefined;
  } finally {
    files.cleanup();
  }
}

/**
 * The check failed after the command exited 0: a note with the end of its
 * output, the task left in progress for this worker, and the command runs
 * on it again, until the task failed maxFailures times here; then the
 * worker gives up on it and leaves it in progress (docs/protocol.md,
 * "Checks before done").
 */
async function settleCheckFailed(state: WorkerState, id: number, check: CheckRun, durationMs: number): Promise<Retry | undefined> {
  const { store, owner, summary } = state;
  try {
    await recordCheckFailure(store, id, check, { actor: owner });
  } catch (error) {
    lose(state, id, error);
    return undefined;
  }
  const failedBefore = state.failures.get(id) ?? 0;
  const retry = failedBefore + 1 < state.maxFailures;
  state.failures.set(id, failedBefore + 1);
  summary.failed.push(id);
  if (!retry) {
    state.excluded.add(id);
    summary.gaveUp.push(id);
    state.kept.push(id);
  }
  const { command, exitCode, signal, timedOut } = check;
  emit(state, { type: 'task.verify_failed', task: id, command, exitCode, signal, timedOut, durationMs, retry });
  return retry ? { id, failedCheck: check } : undefined;
}

/** With single-in-progress, a task this worker left in progress (its check kept failing) keeps it from taking another. */
function holdsKeptTask(state: WorkerState): boolean {
  if (!state.store.config.singleInProgress) return false;
  return state.kept.some((id) => {
    const task = state.store.peekTask(id);
    return task?.status === 'in_progress' && task.owner === state.owner;
  });
}

/**
 * Waits for the command while holding the claim: a task reaped, released or
 * taken while we work stops the command at once, and is then neither
 * completed nor released (it is not ours).
 */
async function awaitCommand(state: WorkerState, run: TaskRun): Promise<{ exit: CommandExit; loss: ClaimLoss | undefined }> {
  const { options, store } = state;
  const held = holdClaim(store, {
    ...holdOptions(state, run),
    onLost: () => {
      run.stopped = run.command.kill();
    },
  });
  const onAbort = () => void run.command.kill();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const exit = await run.command.exited;
    // One last look before completing or releasing: the command may have
    // ended just as its task was taken (and left something running).
    held.check();
    return { exit, loss: held.lost };
  } finally {
    held.stop();
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** How the worker holds its claim while the command, or the check after it, runs. */
function holdOptions(state: WorkerState, run: TaskRun): Omit<HoldOptions, 'onLost'> {
  const { options, owner } = state;
  // A sync may move the task to a new id while the command runs (docs/protocol.md, "Ids across machines"); the
  // claim moves with it, and so does everything the worker does with it from then on.
  return {
    task: run.id,
    owner,
    claimedAt: run.claim.lease.claimedAt,
    sinceSeq: run.claim.events.find((e) => e.task === run.claim.task.id && e.type === 'claimed')?.seq,
    leaseSeconds: options.leaseSeconds,
    checkMs: options.claimCheckMs,
    onMoved: (to) => {
      emit(state, { type: 'task.moved', task: to, from: run.id });
      run.id = to;
    },
    // With --sync the renewed lease is published, so other machines do not reap a task still being worked.
    afterRenew: options.sync ? () => publish(state) : undefined,
  };
}

/** The task was taken while the command ran: say so in the board's log and leave it to its new holder. */
async function settleLost(state: WorkerState, run: TaskRun, loss: ClaimLoss, durationMs: number): Promise<void> {
  const { store, owner } = state;
  const id = run.id;
  const pid = run.command.pid;
  await run.stopped;
  await store
    .recordEvent({ type: 'work.stopped', task: id, owner, reason: loss.reason, message: loss.message, ...(pid ? { pid } : {}), durationMs })
    .catch((error: unknown) => {
      // The board's log is busy or gone; the worker's own event below still says it.
      if (!isBusy(error)) throw error;
    });
  leave(state, id);
  emit(state, { type: 'task.lost', task: id, message: loss.message, reason: loss.reason });
}

/** The worker was stopped while the command ran: the task goes back to the board. */
async function settleInterrupted(state: WorkerState, id: number): Promise<void> {
  const { store, owner } = state;
  await store.releaseTask(id, { actor: owner, heldBy: owner, reason: 'interrupted' }).catch((error: unknown) => lose(state, id, error));
  emit(state, { type: 'task.interrupted', task: id });
}

/** The command ended on its own: complete the task on exit 0 (its check passed, or it has none), release it with `metadata.lastError` otherwise. */
async function settleExit(
  state: WorkerState,
  run: TaskRun,
  exit: CommandExit,
  durationMs: number,
  scope: ScopeFindings | undefined,
  outcome: { result?: string; verify?: string },
): Promise<void> {
  const { store, owner, summary } = state;
  const id = run.id;
  const failedBefore = state.failures.get(id) ?? 0;
  const retry = exit.code === 0 || failedBefore + 1 < state.maxFailures;
  const end = { task: id, owner, exitCode: exit.code, signal: exit.signal, tail: run.command.tail(), metadata: scope?.metadata };
  const record = await recordRunEnd(store, { ...end, ...(outcome.result !== undefined ? { result: outcome.result } : {}) });
  const outOfScopeFiles = scope?.files.length ? { outOfScope: scope.files } : {};
  if (record.outcome === 'lost') {
    leave(state, id);
    emit(state, { type: 'task.lost', task: id, message: record.message });
    return;
  }
  const checked = { ...(outcome.verify !== undefined ? { verify: outcome.verify } : {}), ...(outcome.result !== undefined ? { result: true } : {}) };
  if (record.outcome === 'completed') {
    summary.completed.push(id);
    emit(state, { type: 'task.completed', task: id, durationMs, unblocked: record.unblocked, ...outOfScopeFiles, ...checked });
    return;
  }
  if (record.outcome === 'review') {
    (summary.inReview ??= []).push(id);
    emit(state, { type: 'task.in_review', task: id, durationMs, ...outOfScopeFiles, ...checked });
    return;
  }
  state.failures.set(id, failedBefore + 1);
  summary.failed.push(id);
  if (!retry) {
    state.excluded.add(id);
    summary.gaveUp.push(id);
  }
  emit(state, { type: 'task.failed', task: id, exitCode: exit.code, signal: exit.signal, durationMs, retry, ...outOfScopeFiles });
}

/** Files a run changed outside its task's paths, and the metadata that records them. */
interface ScopeFindings {
  files: string[];
  metadata: Record<string, unknown>;
}

/**
 * The files the command changed outside the task's paths, and the metadata
 * that records them: `metadata.outOfScope` (the format has no notes field
 * yet), removed again by a later run that stayed inside. Undefined when
 * git cannot tell, or there is nothing to write.
 */
async function outOfScope(store: TaskStore, baseline: ScopeBaseline, task: Task): Promise<ScopeFindings | undefined> {
  const files = await filesOutOfScope(baseline, task.paths ?? [], store.dir);
  if (files === undefined) return undefined;
  if (files.length === 0) return task.metadata?.outOfScope === undefined ? undefined : { files, metadata: { outOfScope: null } };
  const recorded = files.length > MAX_OUT_OF_SCOPE ? [...files.slice(0, MAX_OUT_OF_SCOPE), `… and ${files.length - MAX_OUT_OF_SCOPE} more`] : files;
  return { files, metadata: { outOfScope: recorded } };
}

/**
 * A task taken from us is left to others: whoever released it meant this
 * worker to stop, and claiming it straight back would start the same work
 * again (or loop forever on a command that releases its own task).
 */
function leave(state: WorkerState, id: number): void {
  state.summary.lost.push(id);
  state.excluded.add(id);
}

/** The task was taken from us meanwhile (reaped, forced): report it and carry on. */
function lose(state: WorkerState, id: number, error: unknown): void {
  if (error instanceof TasksError && (error.code === 'E_NOT_OWNER' || error.code === 'E_NOT_FOUND' || error.code === 'E_TRANSITION')) {
    leave(state, id);
    emit(state, { type: 'task.lost', task: id, message: error.message });
    return;
  }
  throw error;
}

/** The command's environment: the worker's, with TASK_* naming the task, and what the attempt adds (its result file, the upstream results). */
function commandEnv(state: WorkerState, task: Task, worktree: string | undefined, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...taskEnv(state.options, task), ...extra };
  if (worktree) env.TASK_WORKTREE = worktree;
  return env;
}

function startCommand(state: WorkerState, task: Task, worktree: string | undefined, extra: Record<string, string>): RunningCommand {
  const { options } = state;
  return spawnCommand(options.command, {
    cwd: worktree ?? options.cwd,
    env: commandEnv(state, task, worktree, extra),
    killGraceMs: options.killGraceMs,
    onOutput: (chunk) => options.onOutput?.(chunk, task.id),
  });
}

import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ClaimError,
  EVENTS_FILE,
  boardLookup,
  TasksError,
  claimWithSync,
  claimWithWorktree,
  completeMergedTasks,
  isClosed,
  isReady,
  readLastSeq,
  readLeases,
  syncBoard,
  searchPath,
  holdClaim,
  recordCheckFailure,
  recordRunEnd,
  type CheckRun,
  type HoldOptions,
  type LastError,
  type ClaimLoss,
  type ClaimLossReason,
  type ClaimResult,
  type SyncOptions,
  type Task,
  type TaskStore,
} from '@dotasks/core/internal';
import { MAX_OUT_OF_SCOPE, filesOutOfScope, scopeBaseline, type ScopeBaseline } from './out-of-scope.js';
import { spawnCommand, type CommandExit, type RunningCommand } from './command.js';
import { checkHeld, prepareAttempt } from './verify.js';

/** What a worker does and how (the `tasks worker` flags). */
export interface WorkerOptions {
  store: TaskStore;
  /** The owner every claim is made as. */
  owner: string;
  /** The command run for each task: argv, or one string run by the shell (so `$TASK_SUBJECT` expands). */
  command: string[];
  /** Claim each task with its own git worktree and run the command there. */
  worktree?: boolean;
  /** Where the command runs without `worktree` (default: process.cwd()). */
  cwd?: string;
  /** The environment the command starts from (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** Stop after this many tasks were taken (done or failed). */
  maxTasks?: number;
  /** Stop after this many seconds with nothing to claim. */
  idleExitSeconds?: number;
  /** Lease length, seconds (default: the board's `leaseSeconds`); renewed while the command runs. */
  leaseSeconds?: number;
  /** After this many failures of one task in this worker, leave it to others (default 2). */
  maxFailures?: number;
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
  /**
   * Work a board shared through a git remote (`tasks worker --sync`): each
   * claim counts once it is on the remote, and each completion or release is
   * synced as soon as it is made.
   */
  sync?: SyncOptions;
  /** Aborting stops the command's whole process group, releases the task and ends the loop. */
  signal?: AbortSignal;
  /** Called with every worker event (see WorkerEvent). */
  onEvent?: (event: WorkerEvent) => void;
  /** The command's stdout and stderr as they come (default: dropped; the tail is kept for lastError). */
  onOutput?: (chunk: Buffer, task: number) => void;
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
  const { options, store } = state;
  const env: NodeJS.ProcessEnv = {
    ...(options.env ?? process.env),
    TASK_ID: String(task.id),
    TASK_SUBJECT: task.subject,
    TASK_DESCRIPTION: task.description,
    TASK_FILE: store.taskPath(task.id),
    TASKS_DIR: store.dir,
    // `tasks` run by the command acts as the worker's owner.
    TASKS_OWNER: state.owner,
    ...extra,
  };
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

/**
 * The in-progress tasks worth waiting for, or undefined when waiting is
 * pointless: nothing in progress can still make a task ready for `owner`.
 * A task in progress counts when it (transitively) blocks a pending task
 * this owner could take, or when its claim can lapse (a lease that expires
 * or a process that can die) so that the task itself comes back.
 */
export function waitingOn(store: TaskStore, owner: string, excluded: ReadonlySet<number> = new Set()): number[] | undefined {
  const snapshot = store.loadBoard();
  const { tasks } = snapshot;
  // Knows the open children: a parent waiting for them is not a task to wait for.
  const lookup = boardLookup(snapshot);
  const wanted = (t: Task) => t.status === 'pending' && (t.owner === '' || t.owner === owner) && !excluded.has(t.id);
  const leases = new Map(readLeases(store).map((l) => [l.task, l]));
  const inProgress = tasks.filter((t) => t.status === 'in_progress');
  const useful: number[] = [];
  for (const task of inProgress) {
    const lease = leases.get(task.id);
    // (Not one this worker left to others: its coming back is of no use here.)
    if (task.owner !== owner && lease && (lease.expiresAt !== null || lease.pid !== undefined) && !excluded.has(task.id)) {
      useful.push(task.id);
      continue;
    }
    // Does finishing it lead, through open tasks, to a pending task we could take?
    const path = searchPath(
      task.id,
      (id) => {
        const t = lookup(id);
        return t !== undefined && wanted(t);
      },
      {
        frontier: 'stack',
        next: (id) => {
          const t = lookup(id);
          return t && !isClosed(t.status) ? t.blocks : [];
        },
      },
    );
    if (path) useful.push(task.id);
  }
  // A ready task we did not get (a lost race) is also worth another look.
  const readyLeft = tasks.some((t) => wanted(t) && isReady(t, lookup, owner));
  if (useful.length === 0 && !readyLeft) return undefined;
  return useful;
}

/** Sleeps until the event log moves past `seq`, at most about a second (leases also lapse by time). */
export async function waitForChange(eventsFile: string, seq: number, pollMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + Math.max(1000, pollMs);
  while (Date.now() < deadline && !signal?.aborted) {
    try {
      await sleep(pollMs / 2 + Math.random() * pollMs, undefined, { signal });
    } catch {
      return; // aborted
    }
    if (readLastSeq(eventsFile) !== seq) return;
  }
}

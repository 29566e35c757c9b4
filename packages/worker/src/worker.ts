import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ClaimError,
  EVENTS_FILE,
  TasksError,
  claimWithSync,
  claimWithWorktree,
  isClosed,
  isReady,
  killGroup,
  readLastSeq,
  readLeases,
  syncBoard,
  searchPath,
  holdClaim,
  recordRunEnd,
  type LastError,
  type ClaimLossReason,
  type ClaimResult,
  type SyncOptions,
  type Task,
  type TaskStore,
} from '@dotasks/core/internal';
import { MAX_OUT_OF_SCOPE, filesOutOfScope, scopeBaseline, type ScopeBaseline } from './out-of-scope.js';

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

/** Why a worker stopped. */
export type StopReason = 'drained' | 'max_tasks' | 'idle' | 'aborted';

/** One line of `tasks worker --json`. Every event has `type`, `at` and `owner`. */
export type WorkerEvent = { at: string; owner: string } & (
  | { type: 'worker.started'; pid: number; command: string[] }
  | { type: 'worker.reaped'; tasks: { task: number; owner: string; reason: string }[] }
  | { type: 'worker.waiting'; inProgress: number[] }
  | { type: 'worker.sync_failed'; message: string }
  | { type: 'task.claimed'; task: number; subject: string; worktree?: string; branch?: string }
  | { type: 'task.completed'; task: number; durationMs: number; unblocked: number[]; outOfScope?: string[] }
  | { type: 'task.failed'; task: number; exitCode: number | null; signal: string | null; durationMs: number; retry: boolean; outOfScope?: string[] }
  | { type: 'task.lost'; task: number; message: string; reason?: ClaimLossReason }
  | { type: 'task.moved'; task: number; from: number }
  | { type: 'task.interrupted'; task: number }
  | { type: 'worker.stopped'; reason: StopReason; completed: number[]; failed: number[]; gaveUp: number[]; lost: number[] }
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
}

/** How much of the command's output a worker keeps for `metadata.lastError`. */
const TAIL_CHARS = 4000;

/** `metadata.lastError` of a task whose command failed (the same record a background job leaves). */
export type { LastError };

type EventBody = WorkerEvent extends infer E ? (E extends WorkerEvent ? Omit<E, 'at' | 'owner'> : never) : never;

/**
 * The worker loop (`tasks worker`): claim the next ready task, run the
 * command on it with TASK_* in its environment while renewing the lease,
 * complete it on exit 0 or release it with `metadata.lastError` otherwise,
 * and repeat until nothing is ready and nothing in progress can make more
 * ready (or maxTasks, idle time, or the abort signal). Uses only the core's
 * public API, so any program can run one.
 */
export async function runWorker(options: WorkerOptions): Promise<WorkerSummary> {
  if (options.command.length === 0) throw new TasksError('E_USAGE', 'a worker needs a command to run for each task (after --)');
  if (options.owner === '') throw new TasksError('E_USAGE', 'a worker needs an owner (--owner or TASKS_OWNER)');
  const { store, owner } = options;
  const pollMs = options.pollMs ?? 200;
  const maxFailures = options.maxFailures ?? 2;
  const summary: WorkerSummary = { owner, reason: 'drained', completed: [], failed: [], gaveUp: [], lost: [] };
  const failures = new Map<number, number>();
  const excluded = new Set<number>();
  const emit = (body: EventBody) => options.onEvent?.({ at: new Date().toISOString(), owner, ...body } as WorkerEvent);
  const eventsFile = join(store.runtimeDir, EVENTS_FILE);

  emit({ type: 'worker.started', pid: process.pid, command: options.command });
  let taken = 0;
  let idleSince: number | undefined;
  let waitingReported = false;
  /** With --sync: a task's outcome is on this board but not yet on the remote. */
  let unpublished = false;
  for (;;) {
    if (options.signal?.aborted) return stop('aborted');
    if (options.maxTasks !== undefined && taken >= options.maxTasks) return stop('max_tasks');
    const reaped = await store.reap({ actor: owner }).catch((error: unknown) => {
      if (error instanceof TasksError && (error.code === 'E_LOCKED' || error.code === 'E_COMPROMISED')) return [];
      throw error;
    });
    if (reaped.length) emit({ type: 'worker.reaped', tasks: reaped.map(({ task, owner: o, reason }) => ({ task, owner: o, reason })) });

    const seqBefore = readLastSeq(eventsFile);
    let claim: ClaimResult & { worktree?: { path: string; branch: string } };
    try {
      const lease = { ttlSeconds: options.leaseSeconds, pid: process.pid };
      claim = options.sync
        ? await claimWithSync(store, undefined, { owner, lease, exclude: excluded, sync: options.sync })
        : options.worktree
          ? await claimWithWorktree(store, undefined, { owner, lease, exclude: excluded })
          : await store.claimNext({ owner, lease, exclude: excluded });
    } catch (error) {
      // A lock held too long by a busy or dying process: look again shortly.
      if (error instanceof TasksError && (error.code === 'E_LOCKED' || error.code === 'E_COMPROMISED')) {
        await waitForChange(eventsFile, seqBefore, pollMs, options.signal);
        continue;
      }
      // With --sync, a remote that is down or busy for a while is waited out, not a reason to stop.
      if (options.sync && error instanceof TasksError && error.code === 'E_GIT') {
        emit({ type: 'worker.sync_failed', message: error.message });
        await waitForChange(eventsFile, seqBefore, Math.max(pollMs, 1000), options.signal);
        continue;
      }
      if (!(error instanceof ClaimError) || error.reason !== 'nothing_ready') throw error;
      // Nothing to claim here: the last completion goes out now instead of with the next claim.
      if (unpublished) await publish();
      const inProgress = waitingOn(store, owner, excluded);
      if (inProgress === undefined) return stop('drained');
      idleSince ??= Date.now();
      if (options.idleExitSeconds !== undefined && Date.now() - idleSince >= options.idleExitSeconds * 1000) return stop('idle');
      if (!waitingReported) emit({ type: 'worker.waiting', inProgress });
      waitingReported = true;
      await waitForChange(eventsFile, seqBefore, pollMs, options.signal);
      continue;
    }
    idleSince = undefined;
    waitingReported = false;
    taken++;
    await work(claim);
    // With --sync the outcome goes out with the sync of the next claim, which follows at once: one push
    // per task instead of two halves the pushes the machines race on. Whatever else ends the loop publishes first.
    unpublished = !!options.sync;
  }

  /** Sends a completion or release to the remote; a remote that is down now gets it with the next sync. */
  async function publish(): Promise<void> {
    unpublished = false;
    try {
      await syncBoard(store, options.sync);
    } catch (error) {
      if (!(error instanceof TasksError)) throw error;
    }
  }

  async function stop(reason: StopReason): Promise<WorkerSummary> {
    if (unpublished) await publish();
    summary.reason = reason;
    emit({ type: 'worker.stopped', reason, completed: summary.completed, failed: summary.failed, gaveUp: summary.gaveUp, lost: summary.lost });
    return summary;
  }

  async function work(claim: ClaimResult & { worktree?: { path: string; branch: string } }): Promise<void> {
    const task = claim.task;
    // A sync may move the task to a new id while the command runs (docs/protocol.md, "Ids across machines"); the
    // claim moves with it, and so does everything the worker does with it from then on.
    let id = task.id;
    emit({
      type: 'task.claimed',
      task: id,
      subject: task.subject,
      ...(claim.worktree ? { worktree: claim.worktree.path, branch: claim.worktree.branch } : {}),
    });
    // A task with paths: note the checkout now, to tell afterwards what the command changed outside them.
    const baseline = task.paths?.length ? await scopeBaseline(claim.worktree?.path ?? options.cwd ?? process.cwd()) : undefined;
    const started = Date.now();
    const run = runCommand(task, claim.worktree?.path);
    // The task was reaped, released or taken while we worked: stop the
    // command at once, and do not complete or release it (it is not ours).
    let stopped: Promise<void> = Promise.resolve();
    const held = holdClaim(store, {
      task: id,
      owner,
      claimedAt: claim.lease.claimedAt,
      sinceSeq: claim.events.find((e) => e.task === id && e.type === 'claimed')?.seq,
      leaseSeconds: options.leaseSeconds,
      checkMs: options.claimCheckMs,
      onLost: () => {
        stopped = run.kill();
      },
      onMoved: (to) => {
        emit({ type: 'task.moved', task: to, from: id });
        id = to;
      },
      // With --sync the renewed lease is published, so other machines do not reap a task still being worked.
      afterRenew: options.sync ? publish : undefined,
    });
    const onAbort = () => void run.kill();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let exit: { code: number | null; signal: NodeJS.Signals | null };
    try {
      exit = await run.exited;
      // One last look before completing or releasing: the command may have
      // ended just as its task was taken (and left something running).
      held.check();
    } finally {
      held.stop();
      options.signal?.removeEventListener('abort', onAbort);
    }
    const loss = held.lost;
    const durationMs = Date.now() - started;

    if (loss) {
      await stopped;
      await store
        .recordEvent({ type: 'work.stopped', task: id, owner, reason: loss.reason, message: loss.message, ...(run.pid ? { pid: run.pid } : {}), durationMs })
        .catch((error: unknown) => {
          // The board's log is busy or gone; the worker's own event below still says it.
          if (!(error instanceof TasksError && (error.code === 'E_LOCKED' || error.code === 'E_COMPROMISED'))) throw error;
        });
      leave(id);
      emit({ type: 'task.lost', task: id, message: loss.message, reason: loss.reason });
      return;
    }
    if (options.signal?.aborted) {
      await store.releaseTask(id, { actor: owner, heldBy: owner, reason: 'interrupted' }).catch((error: unknown) => lose(id, error));
      emit({ type: 'task.interrupted', task: id });
      return;
    }
    const scope = baseline ? await outOfScope(baseline, task) : undefined;
    const failedBefore = failures.get(id) ?? 0;
    const retry = exit.code === 0 || failedBefore + 1 < maxFailures;
    const record = await recordRunEnd(store, { task: id, owner, exitCode: exit.code, signal: exit.signal, tail: run.tail(), metadata: scope?.metadata });
    if (record.outcome === 'lost') {
      leave(id);
      emit({ type: 'task.lost', task: id, message: record.message });
      return;
    }
    if (record.outcome === 'completed') {
      summary.completed.push(id);
      emit({ type: 'task.completed', task: id, durationMs, unblocked: record.unblocked, ...(scope?.files.length ? { outOfScope: scope.files } : {}) });
      return;
    }
    failures.set(id, failedBefore + 1);
    summary.failed.push(id);
    if (!retry) {
      excluded.add(id);
      summary.gaveUp.push(id);
    }
    emit({
      type: 'task.failed',
      task: id,
      exitCode: exit.code,
      signal: exit.signal,
      durationMs,
      retry,
      ...(scope?.files.length ? { outOfScope: scope.files } : {}),
    });
  }

  /**
   * The files the command changed outside the task's paths, and the metadata
   * that records them: `metadata.outOfScope` (the format has no notes field
   * yet), removed again by a later run that stayed inside. Undefined when
   * git cannot tell, or there is nothing to write.
   */
  async function outOfScope(baseline: ScopeBaseline, task: Task): Promise<{ files: string[]; metadata: Record<string, unknown> } | undefined> {
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
  function leave(id: number): void {
    summary.lost.push(id);
    excluded.add(id);
  }

  /** The task was taken from us meanwhile (reaped, forced): report it and carry on. */
  function lose(id: number, error: unknown): void {
    if (error instanceof TasksError && (error.code === 'E_NOT_OWNER' || error.code === 'E_NOT_FOUND' || error.code === 'E_TRANSITION')) {
      leave(id);
      emit({ type: 'task.lost', task: id, message: error.message });
      return;
    }
    throw error;
  }

  function runCommand(task: Task, worktree: string | undefined) {
    const env: NodeJS.ProcessEnv = {
      ...(options.env ?? process.env),
      TASK_ID: String(task.id),
      TASK_SUBJECT: task.subject,
      TASK_DESCRIPTION: task.description,
      TASK_FILE: store.taskPath(task.id),
      TASKS_DIR: store.dir,
      // `tasks` run by the command acts as the worker's owner.
      TASKS_OWNER: owner,
    };
    if (worktree) env.TASK_WORKTREE = worktree;
    const [file, ...args] = options.command;
    // A command of its own process group, so stopping it stops everything it started.
    const child: ChildProcess =
      options.command.length === 1
        ? spawn(file, { shell: true, cwd: worktree ?? options.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
        : spawn(file, args, { cwd: worktree ?? options.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const onData = (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-TAIL_CHARS);
      options.onOutput?.(chunk, task.id);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    let killing: Promise<void> | undefined;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      let result: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      child.on('error', (error) => {
        tail += `\n${error.message}`;
        resolve({ code: 127, signal: null });
      });
      child.on('exit', (code, signal) => {
        result = { code, signal };
        // Output can still be in flight; wait for the pipes, but not for a
        // background process that kept them open.
        setTimeout(() => resolve(result!), 1000).unref();
      });
      child.on('close', () => {
        if (result) resolve(result);
      });
    });
    return {
      exited,
      pid: child.pid,
      tail: () => tail.trimEnd(),
      /** Stops the whole group: SIGTERM, then SIGKILL for what is left after the grace time; resolves when none of it runs. */
      kill(): Promise<void> {
        if (child.pid === undefined) return Promise.resolve();
        killing ??= killGroup(child.pid, options.killGraceMs ?? 3000).catch(() => undefined);
        return killing;
      },
    };
  }
}

/**
 * The in-progress tasks worth waiting for, or undefined when waiting is
 * pointless: nothing in progress can still make a task ready for `owner`.
 * A task in progress counts when it (transitively) blocks a pending task
 * this owner could take, or when its claim can lapse (a lease that expires
 * or a process that can die) so that the task itself comes back.
 */
export function waitingOn(store: TaskStore, owner: string, excluded: ReadonlySet<number> = new Set()): number[] | undefined {
  const { tasks, byId } = store.loadBoard();
  const lookup = (id: number) => byId.get(id);
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
async function waitForChange(eventsFile: string, seq: number, pollMs: number, signal?: AbortSignal): Promise<void> {
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

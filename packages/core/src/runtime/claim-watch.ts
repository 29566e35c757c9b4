import { join } from 'node:path';
import { EVENTS_FILE, readLastSeq, type TaskEvent } from '../events/events.js';
import type { Task, TaskStatus } from '../format/format.js';
import { readLease, type Lease } from './leases.js';
import { findMove } from './moved-tasks.js';
import type { TaskStore } from '../store.js';

/**
 * Watching a claim while a command works on it (`tasks worker`, `tasks run`):
 * a cheap look every half second at the task file and its lease record, so a
 * task that was reaped, released or claimed by someone else stops its
 * command within a second or two instead of at the next lease renewal
 * (minutes). The judgement is a pure function (judgeClaim) so every case can
 * be tested without processes.
 */

/** The claim a command works under: the lease's owner and `claimedAt` identify it. */
export interface WatchedClaim {
  task: number;
  owner: string;
  /** The lease's `claimedAt` when the claim was made; a renewal keeps it, a new claim does not. */
  claimedAt: string;
}

/** What happened to a claim, as the first event that let go of it says (or the task's state when the log is silent). */
export type ClaimLossReason = 'released' | 'reaped' | 'claimed' | 'reassigned' | 'completed' | 'deleted' | 'removed';

/** Why a claim no longer holds. */
export interface ClaimLoss {
  task: number;
  reason: ClaimLossReason;
  /** Who did it, when the event log names them. */
  by?: string;
  /** The task's status and owner when the loss was seen; undefined when its file is gone. */
  now?: { status: TaskStatus; owner: string };
  /** One sentence for people: `task #3 was released by ann (now pending)`. */
  message: string;
}

/**
 * One look at a claim. `held` may carry a newer `claimedAt` to follow (the
 * same owner claimed the task again without ever letting it go, e.g. the
 * command ran `tasks claim $TASK_ID`); `closed` is a task the owner itself
 * completed or deleted (the command finished it: nothing left to guard);
 * `suspect` is a loss that one look cannot prove (a file in the middle of a
 * change): it counts only when the next look agrees.
 */
export type ClaimVerdict =
  { state: 'held'; claimedAt?: string } | { state: 'closed' } | { state: 'suspect'; loss: ClaimLoss } | { state: 'lost'; loss: ClaimLoss };

/** What one look read: the task (or why there is none), its lease record, and the task's events since the claim (read only when needed). */
export interface ClaimSighting {
  task: Task | 'missing' | 'unreadable';
  lease: Lease | undefined;
  events: () => TaskEvent[];
}

/** Events that end a claim, whoever sends them. */
const LET_GO = new Set(['released', 'reaped', 'completed', 'deleted']);

/**
 * The first event since the claim that took the task from `owner`: a
 * release, a reap, a close, or a claim by someone else. (An owner change by
 * `tasks update` is not in the list: it may name the same owner again.)
 */
function firstLetGo(owner: string, events: TaskEvent[]): TaskEvent | undefined {
  return events.find((e) => LET_GO.has(e.type) || ((e.type === 'claimed' || e.type === 'started') && e.owner !== owner));
}

/** Decides from one look whether the claim still holds. Pure: the caller reads the files. */
export function judgeClaim(claim: WatchedClaim, seen: ClaimSighting): ClaimVerdict {
  const { task, lease } = seen;
  if (task === 'missing') return { state: 'suspect', loss: explainLoss(claim, seen) };
  if (task === 'unreadable') {
    // Someone is editing the file, or it is broken: the task file cannot
    // tell, so only a lease naming another owner is a sign, and one look is
    // not enough.
    if (lease && lease.owner !== claim.owner) return { state: 'suspect', loss: explainLoss(claim, seen) };
    return { state: 'held' };
  }
  if (task.status === 'in_progress' && task.owner === claim.owner) {
    // The task file is the truth; a missing lease record is re-made by the
    // next renewal or `tasks doctor`, and says nothing about who holds it.
    if (!lease || lease.claimedAt === claim.claimedAt) return { state: 'held' };
    // A claim writes its lease before the task file: another owner's lease
    // on a task still ours is a claim half done, or a record written by hand.
    if (lease.owner !== claim.owner) return { state: 'suspect', loss: explainLoss(claim, seen) };
    // Our owner made a new claim record. Reaped or released meanwhile and
    // claimed again (another process of the same name): lost. Claimed again
    // while held (the command ran `tasks claim`, or a renewal re-made a lost
    // record): still ours, under the new record. The log is causal (events
    // are appended under the task lock), so a let-go is there before the
    // next claim's record.
    if (firstLetGo(claim.owner, seen.events())) return { state: 'lost', loss: explainLoss(claim, seen) };
    return { state: 'held', claimedAt: lease.claimedAt };
  }
  if (task.status === 'completed' || task.status === 'deleted') {
    // Closed by the owner itself: the command finished the task and may be
    // wrapping up; nobody else can start a closed task, so leave it be. The
    // close's event follows the file by a moment, hence suspect until then.
    const close = seen.events().find((e) => e.type === task.status);
    if (!close) return { state: 'suspect', loss: explainLoss(claim, seen) };
    if (close.owner === claim.owner) return { state: 'closed' };
  }
  // A task file that parses and is not ours is a committed change (writes
  // are atomic renames). Its event follows the file by a moment (the
  // transaction appends events after its renames): until the log explains
  // the loss, one more look, so the reason and who did it are right.
  const events = seen.events();
  const explained = firstLetGo(claim.owner, events) || events.some((e) => e.type === 'updated' && Array.isArray(e.fields) && e.fields.includes('owner'));
  return { state: explained ? 'lost' : 'suspect', loss: explainLoss(claim, seen) };
}

/** Describes a loss from the first event that let go of the claim, or from the task's state. */
export function explainLoss(claim: WatchedClaim, seen: ClaimSighting): ClaimLoss {
  const id = claim.task;
  const task = typeof seen.task === 'object' ? seen.task : undefined;
  const holder = currentHolder(claim, seen);
  const events = seen.events();
  const event = firstLetGo(claim.owner, events);
  let reason: ClaimLossReason;
  let by: string | undefined;
  let what: string;
  if (event) {
    by = typeof event.owner === 'string' && event.owner !== '' ? event.owner : undefined;
    const byText = by ? ` by ${by}` : '';
    if (event.type === 'reaped') {
      reason = 'reaped';
      what = `was reaped${byText}: ${event.reason === 'process_gone' ? 'its process was gone' : 'its lease expired'}`;
    } else if (event.type === 'claimed' || event.type === 'started') {
      reason = 'claimed';
      what = `was claimed${byText}`;
    } else {
      reason = event.type as 'released' | 'completed' | 'deleted';
      what = `was ${event.type}${byText}`;
    }
  } else if (seen.task === 'missing') {
    reason = 'removed';
    what = 'has no file any more';
  } else if (task && task.status !== 'in_progress') {
    reason = task.status === 'pending' ? 'released' : task.status === 'completed' ? 'completed' : 'deleted';
    what = `was ${reason}`;
  } else {
    const handOver = events.find((e) => e.type === 'updated' && Array.isArray(e.fields) && e.fields.includes('owner'));
    by = handOver && typeof handOver.owner === 'string' && handOver.owner !== '' ? handOver.owner : undefined;
    reason = handOver ? 'reassigned' : 'claimed';
    what = handOver ? `was reassigned to ${holder ?? 'someone else'}${by ? ` by ${by}` : ''}` : `was claimed by ${holder ?? 'someone else'}`;
    if (!handOver) by = holder;
  }
  const now = task ? { status: task.status, owner: task.owner } : undefined;
  // A claim or hand-over may already name who holds it now.
  const named = reason === 'claimed' ? by : reason === 'reassigned' ? holder : undefined;
  const message = `task #${id} ${what}${describeNow(claim, seen, reason, named)}`;
  return { task: id, reason, ...(by ? { by } : {}), ...(now ? { now } : {}), message };
}

/** Who holds the task now other than us: the task file's owner, else the lease's. */
function currentHolder(claim: WatchedClaim, seen: ClaimSighting): string | undefined {
  if (typeof seen.task === 'object' && seen.task.status === 'in_progress' && seen.task.owner !== claim.owner) return seen.task.owner;
  if (seen.lease && seen.lease.owner !== claim.owner) return seen.lease.owner;
  return undefined;
}

/** ` (now pending)`, ` (now claimed by agent-2)` …, or nothing when the reason already said it. */
function describeNow(claim: WatchedClaim, seen: ClaimSighting, reason: ClaimLossReason, named: string | undefined): string {
  const task = seen.task;
  if (task === 'missing') return reason === 'removed' ? '' : ' (its file is gone now)';
  const holder = currentHolder(claim, seen);
  if (holder !== undefined) return holder === named ? '' : ` (now claimed by ${holder})`;
  if (task === 'unreadable') return ' (its file does not read now)';
  if (task.status === 'in_progress') {
    const pid = seen.lease?.pid !== undefined ? `, pid ${seen.lease.pid}` : '';
    return ` (now claimed again by ${task.owner} under another claim${pid})`;
  }
  if (task.status === 'pending') return ` (now pending${task.owner ? ` for ${task.owner}` : ''})`;
  return reason === task.status ? '' : ` (now ${task.status})`;
}

/** Options for watchClaim. */
export interface WatchClaimOptions {
  /** How often to look, ms (default 500). */
  intervalMs?: number;
  /** Events with a seq above this count as after the claim (default: the log's last seq when watching starts). */
  sinceSeq?: number;
  /** Called once when the claim is lost; the watch has stopped by then. */
  onLost: (loss: ClaimLoss) => void;
  /** Called when a sync moved the task to a new id, claim and all (the watch follows it there). */
  onMoved?: (to: number) => void;
}

/** A running watch over one claim. */
export interface ClaimWatch {
  /** Looks now (as every tick does) and returns what it saw; a loss also calls onLost. */
  check(): ClaimVerdict;
  /** Stops looking; idempotent. */
  stop(): void;
  /** The loss, once seen. */
  readonly lost: ClaimLoss | undefined;
}

/**
 * Watches a claim until stopped: every `intervalMs` reads the task file and
 * its lease record (two small reads; the event log only when something
 * changed) and calls `onLost` once the claim is gone. A loss one look cannot
 * prove must be seen twice in a row, so a file caught mid-edit does not
 * count. A task its own owner closed ends the watch quietly.
 */
export function watchClaim(store: TaskStore, claim: WatchedClaim, options: WatchClaimOptions): ClaimWatch {
  const watched = { ...claim };
  const eventsFile = join(store.runtimeDir, EVENTS_FILE);
  const sinceSeq = options.sinceSeq ?? safe(() => readLastSeq(eventsFile), 0);
  let suspectBefore = false;
  let stopped = false;
  let lost: ClaimLoss | undefined;
  let last: ClaimVerdict = { state: 'held' };

  const look = (): ClaimSighting => {
    let task: ClaimSighting['task'];
    try {
      task = store.peekTask(watched.task) ?? (store.hasTask(watched.task) ? 'unreadable' : 'missing');
    } catch {
      task = 'unreadable'; // EACCES, EISDIR …: as good as a file in the middle of an edit
    }
    let events: TaskEvent[] | undefined;
    return {
      task,
      lease: safe(() => readLease(store.runtimeDir, watched.task), undefined),
      events: () => (events ??= safe(() => store.readEvents(sinceSeq).filter((e) => e.task === watched.task), [])),
    };
  };

  const check = (): ClaimVerdict => {
    if (stopped) return last;
    let verdict = judgeClaim(watched, look());
    // Not lost but moved: a sync gave the task a new id (the remote had its id), with its claim (moved-tasks.ts).
    const moved =
      verdict.state === 'held' || verdict.state === 'closed' ? undefined : findMove(store.runtimeDir, watched.task, watched.owner, (id) => store.peekTask(id));
    if (moved !== undefined) {
      watched.task = moved;
      options.onMoved?.(moved);
      verdict = judgeClaim(watched, look());
    }
    last = verdict;
    if (verdict.state === 'held') {
      suspectBefore = false;
      if (verdict.claimedAt) watched.claimedAt = verdict.claimedAt;
    } else if (verdict.state === 'closed') {
      stop();
    } else if (verdict.state === 'lost' || suspectBefore) {
      lost = verdict.loss;
      stop();
      options.onLost(verdict.loss);
    } else {
      suspectBefore = true;
    }
    return verdict;
  };

  const timer = setInterval(check, options.intervalMs ?? 500);
  // The command keeps the process alive, not its watch.
  timer.unref();
  function stop(): void {
    stopped = true;
    clearInterval(timer);
  }
  return {
    check,
    stop,
    get lost() {
      return lost;
    },
  };
}

function safe<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

// The engine's claims and their records (claim, claim next, start, release,
// heartbeat), each one transaction (reaping and adopting: reap.ts); TaskStore (store.ts)
// delegates here (docs/protocol.md, "Owners, claims and leases").
import { existsSync } from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { ClaimError, TasksError } from '../errors.js';
import { inReview, isClosed, type Task } from '../format/format.js';
import { isReady, openBlockers, readyWith, type TaskLookup } from '../graph/graph.js';
import { rankTasks } from '../graph/ready-order.js';
import { isLockHeld } from '../fs/locks.js';
import { createLease, leaseLengthOf, listLeases, readLease, type Lease } from '../runtime/leases.js';
import type { BoardFiles } from './board-files.js';
import { awaitExactPass, openClaimView, shareClaimView, type ClaimView } from './claim-view.js';
import { badScopeError } from '../scopes/glob-limits.js';
import { assertOwnerFree } from './mutations.js';
import { assertNoOpenChildren, openChildrenAmong } from './parents.js';
import { leaveReview } from './review-entry.js';
import { appendNote, applyMetadata, assertHeldBy, checkNoteText, checkTransition } from './rules.js';
import type { ActorOptions, ClaimOptions, ClaimResult, MutationResult, ScopeOverlap } from './store-types.js';
import type { TxOptions } from './run-transaction.js';

/**
 * Compare-and-swap claim under the task's lock: succeeds only when the task
 * is ready or already the claimant's. Of concurrent claimants exactly one
 * wins; the others get a ClaimError with the reason.
 */
export async function claimTask(board: BoardFiles, id: number, options: ClaimOptions): Promise<ClaimResult> {
  return claimOne(board, id, options, 'claimed', {}, { mode: 'warn' });
}

/**
 * How a claim treats file scopes (docs/protocol.md, "File scopes"): claimNext
 * refuses a task whose paths overlap a task in progress, an explicit claim
 * warns. Either way the check runs under the board lock, so two claims of
 * overlapping tasks cannot both pass it. `board`: the task is known to have
 * paths, so the board lock is taken from the start.
 */
interface ScopeCheck {
  mode: 'refuse' | 'warn';
  board?: boolean;
  /** claimNext's candidate: the view it was ranked on judged its open children already (parents.ts, openChildrenAmong). */
  childrenJudged?: boolean;
}

/** A claimNext candidate whose scope overlaps a task in progress; never leaves claimNext. */
class ScopeBusy extends Error {}

async function claimOne(
  board: BoardFiles,
  id: number,
  options: ClaimOptions & { activeForm?: string },
  eventType: string,
  txOptions: TxOptions = {},
  scopes?: ScopeCheck,
): Promise<ClaimResult> {
  const owner = options.owner;
  if (owner === '') throw new TasksError('E_INVALID', 'a claim needs an owner (--owner or TASKS_OWNER)');
  if (!existsSync(board.taskPath(id))) throw new ClaimError('not_found', `task #${id} not found (see 'tasks list')`, { task: id });
  let alreadyHeld = false;
  let lease!: Lease;
  let overlaps: ScopeOverlap[] = [];
  const result = await board.transact(
    { owners: [owner], tasks: [id], board: scopes?.board === true },
    async (tx) => {
      alreadyHeld = false;
      overlaps = [];
      const task = tx.tryRead(id);
      if (!task) throw new ClaimError('not_found', `task #${id} not found (see 'tasks list')`, { task: id });
      // Its work is finished: it waits for a verdict, not for someone to work on it (docs/protocol.md, "Review").
      if (inReview(task))
        throw new ClaimError('not_pending', `task #${id} waits for review, not for work ('tasks approve ${id}' or 'tasks reject ${id} --note …')`, {
          task: id,
          status: task.status,
        });
      if (task.status === 'in_progress' && task.owner === owner) {
        alreadyHeld = true;
      } else if (task.status === 'in_progress' || (task.status === 'pending' && task.owner !== '' && task.owner !== owner)) {
        throw new ClaimError('already_claimed', `task #${id} is already claimed by ${task.owner || 'someone'}`, {
          task: id,
          owner: task.owner,
        });
      } else if (task.status !== 'pending') {
        throw new ClaimError('not_pending', `task #${id} is ${task.status}, not pending`, { task: id, status: task.status });
      } else {
        const open = openBlockers(task, (n) => tx.view(n));
        if (open.length)
          throw new ClaimError('blocked', `task #${id} is blocked by ${open.map((b) => `#${b}`).join(', ')}`, {
            task: id,
            blockedBy: open,
          });
        // A parent with open children is not work to claim: its children are (docs/protocol.md, "Parents").
        if (!scopes?.childrenJudged) assertNoOpenChildren(board, tx, id, 'claim');
      }
      if (!alreadyHeld) assertOwnerFree(board, tx, owner, new Set([id]));
      if (scopes && !alreadyHeld && task.paths?.length) {
        // A scope no claim can check holds its own task back, and nothing else (glob-limits.ts).
        const bad = badScopeError(task);
        if (bad) throw bad;
        // Every claim of a task with paths holds the board lock while it looks: of two overlapping ones, the second sees the first.
        tx.need({ board: true });
        const hits = await overlapsInProgress(board, task, inProgressWithPaths(board));
        if (hits.length && scopes.mode === 'refuse') throw new ScopeBusy(`task #${id} overlaps a task in progress`);
        overlaps = hits.map((t) => ({ task: t.id, owner: t.owner, paths: [...(t.paths ?? [])] }));
      }
      const edited = tx.edit(id);
      edited.status = 'in_progress';
      edited.owner = owner;
      if (options.activeForm !== undefined) edited.activeForm = options.activeForm;
      tx.put(edited);
      const previous = alreadyHeld ? tx.readLease(id) : undefined;
      lease = createLease(id, owner, options.lease === undefined ? {} : options.lease, board.config.leaseSeconds);
      if (previous && options.lease === undefined) lease.claimedAt = previous.claimedAt;
      tx.putLease(lease);
      if (!alreadyHeld) tx.event({ type: eventType, task: id, owner, ...(lease.expiresAt ? { expiresAt: lease.expiresAt } : {}) });
      else if (options.activeForm !== undefined) tx.event({ type: 'updated', task: id, owner, fields: ['activeForm'] });
    },
    txOptions,
  );
  const task = result.written[0] ?? board.getTask(id);
  return { task, written: result.written, unblocked: [], events: result.events, alreadyHeld, lease, ...(overlaps.length ? { overlaps } : {}) };
}

/** The tasks in progress that declare paths, from the claim view (the open tasks; stats, and reads what changed). */
function inProgressWithPaths(board: BoardFiles): Task[] {
  const view = openClaimView(board.dir);
  const out: Task[] = [];
  for (const id of view.candidates) {
    const task = view.lookup(id);
    if (task && task.status === 'in_progress' && task.paths?.length) out.push(task);
  }
  return out;
}

/** The tasks of `busy` whose scope overlaps `task`'s; loads the scope rules (and asks git) only when both sides have paths. */
async function overlapsInProgress(board: BoardFiles, task: Task, busy: Task[]): Promise<Task[]> {
  if (!task.paths?.length || !busy.some((t) => t.id !== task.id)) return [];
  const { overlappingTasks } = await import('../scopes/scopes.js');
  return overlappingTasks(board.dir, task, busy);
}

/**
 * Claims the first ready task in the order of readyOrder (priority, the work
 * it unblocks, id); on losing a race, tries the next one.
 * A ready task whose lock is held right now is being claimed (or changed)
 * by someone else: it is passed over at first and tried again, waiting for
 * its lock, only if no later task could be claimed, so that contending
 * claimants spread over the ready tasks instead of queueing on one lock.
 */
export async function claimNext(board: BoardFiles, options: ClaimOptions): Promise<ClaimResult> {
  const pass: NextClaim = {
    board,
    options,
    exclude: new Set(options.exclude ?? []),
    view: await firstClaimView(board.dir),
    busy: [],
    held: new Set(),
    badScopes: new Set(),
    lastYield: Date.now(),
  };
  for (;;) {
    const won = (await tryRanked(pass)) ?? (await tryBusy(pass));
    if (won) return won;
    if (pass.view.exact) break;
    // Nothing from the index: look at every file before saying so.
    pass.view = openClaimView(board.dir, { exact: true });
    pass.scoped = undefined;
  }
  throw nothingReady(pass);
}

/** What claimNext carries from one candidate to the next. */
interface NextClaim {
  board: BoardFiles;
  options: ClaimOptions;
  exclude: Set<number>;
  view: ClaimView;
  /** Candidates whose lock was held when their turn came: tried again, waiting, after the others. */
  busy: number[];
  /** Candidates held back by a task in progress on the same files. */
  held: Set<number>;
  /** Candidates whose file scope no claim can use. */
  badScopes: Set<number>;
  /** Tasks in progress with paths, looked up once per view and only when a candidate has paths. */
  scoped?: Task[];
  lastYield: number;
}

/** The first view of the board: candidates come from the board index; the claim itself re-checks under the lock (board-index.ts). */
async function firstClaimView(dir: string): Promise<ClaimView> {
  await awaitExactPass(dir);
  for (;;) {
    const shared = shareClaimView(dir);
    if (shared) return shared;
    await awaitExactPass(dir);
  }
}

/**
 * One pass over the ready candidates, best first. The open tasks come from the
 * index's open part (a stat each, a read only for a changed file); they are
 * ranked by priority, then the chain of open work behind them, then id
 * (graph/ready-order.ts), on what the index says (a stat of every open task on
 * every claim would cost more than the claim), then each candidate is checked
 * against its file before it is tried.
 */
async function tryRanked(pass: NextClaim): Promise<ClaimResult | undefined> {
  const { view, options } = pass;
  const lookup = (n: number) => view.lookup(n);
  for (const { id } of rankTasks(readyCandidates(pass), (n) => view.peek(n))) {
    // A long pass over candidates that are gone must still let timers run (lock refreshes, a worker's heartbeat).
    if (Date.now() - pass.lastYield > 50) {
      await yieldToLoop();
      pass.lastYield = Date.now();
    }
    const task = view.current(id);
    if (!task || !isReady(task, lookup, options.owner)) continue;
    // Its lock is held right now (another claimant is on it; a stale one is tried as before): passed over like a
    // busy lock below, but found by a look instead of a round of locks (our owner lock taken and given back),
    // which claimants that start together would otherwise pay for every candidate the others are claiming.
    if (isLockHeld(pass.board.taskLockPath(id), pass.board.lockOptions)) {
      pass.busy.push(id);
      continue;
    }
    if (await scopeBusy(pass, task)) continue;
    const won = await attemptClaim(pass, task, true);
    if (won) return won;
  }
  return undefined;
}

/**
 * The candidates that look ready on the index. A blocker the index still has
 * open is looked at, so a task its own claimant's last completion unblocked
 * ranks at once.
 */
function readyCandidates(pass: NextClaim): Task[] {
  const { view, options } = pass;
  const readiness: TaskLookup = (id: number) => {
    const task = view.peek(id);
    return task && !isClosed(task.status) ? view.lookup(id) : task;
  };
  // Every open task is a candidate, so the candidates' parents are every parent with open children.
  const children = openChildrenAmong(view);
  readiness.openChildren = (id) => children.get(id) ?? [];
  const ready: Task[] = [];
  for (const id of view.candidates) {
    if (pass.exclude.has(id)) continue;
    const task = view.peek(id);
    if (task && readyWith(task, readiness, options.owner, readiness.openChildren)) ready.push(task);
  }
  return ready;
}

/** The candidates passed over for a held lock, tried again, now waiting for the lock. */
async function tryBusy(pass: NextClaim): Promise<ClaimResult | undefined> {
  const { view, options } = pass;
  for (const id of pass.busy.splice(0)) {
    view.forget(id);
    const task = view.current(id);
    if (!task || !isReady(task, (n) => view.lookup(n), options.owner)) continue;
    const won = await attemptClaim(pass, task, false);
    if (won) return won;
  }
  return undefined;
}

/** Whether `task`'s file scope holds it back: a scope no claim can use, or one that overlaps a task in progress. */
async function scopeBusy(pass: NextClaim, task: Task): Promise<boolean> {
  if (!task.paths?.length) return false;
  if (badScopeError(task)) {
    pass.badScopes.add(task.id);
    return true;
  }
  const { view } = pass;
  pass.scoped ??= view.candidates.map((n) => view.lookup(n)).filter((t): t is Task => t !== undefined && t.status === 'in_progress' && !!t.paths?.length);
  const busyNow = (await overlapsInProgress(pass.board, task, pass.scoped)).length > 0;
  if (busyNow) pass.held.add(task.id);
  return busyNow;
}

/** Tries to claim `task`; undefined when it was lost to a race, held back, or (with `noWait`) its lock was held. */
async function attemptClaim(pass: NextClaim, task: Task, noWait: boolean): Promise<ClaimResult | undefined> {
  const id = task.id;
  try {
    return await claimOne(
      pass.board,
      id,
      pass.options,
      'claimed',
      { noWaitTasks: noWait },
      { mode: 'refuse', board: !!task.paths?.length, childrenJudged: true },
    );
  } catch (error) {
    if (error instanceof ScopeBusy) {
      pass.held.add(id);
      return undefined;
    }
    if (error instanceof TasksError && error.details.badScope === true) {
      pass.badScopes.add(id);
      return undefined;
    }
    if (noWait && error instanceof TasksError && error.code === 'E_LOCKED' && error.details.lock === pass.board.taskLockPath(id)) {
      pass.busy.push(id);
      return undefined;
    }
    if (error instanceof ClaimError && error.reason !== 'owner_busy') {
      pass.view.forget(id);
      return undefined;
    }
    throw error;
  }
}

/** Why nothing could be claimed: scopes no claim can use, tasks held back by scopes, or simply nothing ready. */
function nothingReady(pass: NextClaim): ClaimError {
  const { badScopes, held } = pass;
  if (badScopes.size && !held.size) {
    const ids = [...badScopes].sort((a, b) => a - b);
    return new ClaimError(
      'nothing_ready',
      `nothing is ready to claim: ${ids.map((id) => `#${id}`).join(', ')} ha${ids.length === 1 ? 's' : 've'} a file scope no claim can use (see 'tasks doctor')`,
      { badScope: ids },
    );
  }
  if (held.size) {
    const ids = [...held].sort((a, b) => a - b).map((id) => `#${id}`);
    return new ClaimError(
      'nothing_ready',
      `nothing is ready to claim: ${ids.join(', ')} wait${held.size === 1 ? 's' : ''} for tasks in progress on the same files (see 'tasks list')`,
      {
        heldByScope: [...held].sort((a, b) => a - b),
      },
    );
  }
  return new ClaimError('nothing_ready', "nothing is ready to claim (see 'tasks list')");
}

/** Starts work on a task as a person: like a claim, without a lease that expires. */
export async function startTask(board: BoardFiles, id: number, options: ActorOptions & { owner?: string; activeForm?: string } = {}): Promise<ClaimResult> {
  const owner = options.owner ?? options.actor ?? '';
  return claimOne(board, id, { owner, lease: null, activeForm: options.activeForm }, 'started');
}

/** Puts a claimed task back to pending with no owner; someone else's needs `force`. */
export async function releaseTask(
  board: BoardFiles,
  id: number,
  options: ActorOptions & { force?: boolean; reason?: string; metadata?: Record<string, unknown>; heldBy?: string; note?: string } = {},
): Promise<MutationResult> {
  const note = options.note === undefined ? undefined : checkNoteText(options.note);
  const result = await board.transact({ tasks: [id] }, (tx) => {
    // Back to pending: claim --next may take it at once (board-index.ts).
    tx.refreshIndexOnCommit();
    const task = tx.edit(id);
    if (options.heldBy !== undefined) assertHeldBy(task, options.heldBy);
    if (isClosed(task.status)) checkTransition(task, 'pending');
    if (task.owner !== '' && options.actor !== undefined && task.owner !== options.actor && !options.force)
      throw new TasksError('E_NOT_OWNER', `task #${id} belongs to ${task.owner}; add --force to release it anyway`, {
        id,
        owner: task.owner,
      });
    const previousOwner = task.owner;
    task.status = 'pending';
    task.owner = '';
    leaveReview(task);
    if (options.metadata) applyMetadata(task, options.metadata);
    if (note !== undefined) appendNote(task, { at: new Date().toISOString(), owner: options.actor ?? previousOwner, text: note });
    tx.put(task);
    if (tx.readLease(id)) tx.dropLease(id);
    tx.event({
      type: options.reason === 'reaped' ? 'reaped' : 'released',
      task: id,
      owner: options.actor,
      previousOwner,
      ...(options.reason ? { reason: options.reason } : {}),
    });
  });
  return { task: result.written[0] ?? board.getTask(id), written: result.written, unblocked: [], events: result.events };
}

/**
 * Renews the lease of `id` (or of every task the owner holds). A claim that
 * never expires stays so unless `ttlSeconds` is given; `worktree` records
 * where the work happens.
 */
export async function heartbeat(board: BoardFiles, options: { owner: string; id?: number; ttlSeconds?: number; worktree?: string }): Promise<Lease[]> {
  const renewed: Lease[] = [];
  const ids =
    options.id !== undefined
      ? [options.id]
      : listLeases(board.runtimeDir)
          // A reviewer's claims are renewed by its review (review.ts), not as work.
          .filter((l) => l.owner === options.owner && !l.review)
          .map((l) => l.task);
  for (const id of ids) {
    const result = await board.transact({ tasks: [id] }, (tx) => {
      const task = tx.read(id);
      // A task waiting for review has no claim to renew: its work is finished (docs/protocol.md, "Review").
      if (inReview(task))
        throw new TasksError('E_NOT_OWNER', `task #${id} waits for review; it has no claim to renew`, { id, owner: task.owner, status: task.status });
      if (task.status !== 'in_progress' || task.owner !== options.owner)
        throw new TasksError(
          'E_NOT_OWNER',
          `task #${id} is not in progress for ${options.owner} (${task.status}${task.owner ? `, owner ${task.owner}` : ''}); nothing to renew`,
          { id, owner: task.owner, status: task.status },
        );
      const old = tx.readLease(id);
      // A renewal keeps the length the lease was given (a 300 s claim renewed without --lease stays 300 s).
      const ttlSeconds = options.ttlSeconds ?? (old ? leaseLengthOf(old) : undefined);
      const lease = createLease(id, options.owner, { ttlSeconds, pid: old?.pid, worktree: options.worktree ?? old?.worktree }, board.config.leaseSeconds);
      if (old) {
        lease.claimedAt = old.claimedAt;
        lease.renewedAt = new Date().toISOString();
      }
      tx.putLease(lease);
      return lease;
    });
    renewed.push(result.value);
  }
  return renewed;
}

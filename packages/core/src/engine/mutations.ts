// The engine's changes to tasks and edges (create, update, link, close,
// batch), each one transaction (clearing the board: clear.ts); TaskStore (store.ts) delegates here.
import { ownerFlag } from '../hints.js';
import { existsSync } from 'node:fs';
import { ClaimError, CorruptTaskError, CycleError, TasksError } from '../errors.js';
import { createRecord, inReview, isClosed, normalizeIds, type Task, type TaskStatus } from '../format/format.js';
import { findCycle, openBlockers, type TaskLookup } from '../graph/graph.js';
import { createLease, listLeases } from '../runtime/leases.js';
import type { BoardFiles } from './board-files.js';
import { closeInTx } from './closing.js';
import { applyLinksInTx, createLinks, linkPatchIds } from './links.js';
import { applyVerify } from './outcome-fields.js';
import { CREATE_KEY, checkCreateKey, taskWithCreateKey } from './create-key.js';
import { applyParent, assertNoOpenChildren, parentsCompleted } from './parents.js';
import { applyReviewRequired, assertReviewUntouched, enterReviewInTx, finishesIntoReview, leaveReview } from './review-entry.js';
import {
  applyLabels,
  appendNote,
  applyMetadata,
  applyPaths,
  checkLabels,
  checkNoteText,
  checkPaths,
  checkPriority,
  checkStatus,
  checkSubject,
  checkTransition,
  removeId,
} from './rules.js';
import type { ActorOptions, BatchItem, CreateTaskInput, MutationResult, UpdateOptions, UpdateTaskInput } from './store-types.js';
import { allocateId } from './next-id.js';
import type { Transaction } from './transaction.js';
/** The id of a task other than `except` that `owner` holds in progress, if any (from claim records). */
export function findOwnerTask(board: BoardFiles, owner: string, except: Set<number>, view: TaskLookup): number | undefined {
  for (const lease of listLeases(board.runtimeDir)) {
    if (lease.owner !== owner || except.has(lease.task)) continue;
    const task = view(lease.task);
    if (task && task.status === 'in_progress' && task.owner === owner) return task.id;
  }
  return undefined;
}

/** Under the owner's lock: refuses a second task in progress for `owner`. */
export function assertOwnerFree(board: BoardFiles, tx: Transaction, owner: string, except: Set<number>): void {
  if (!board.config.singleInProgress || owner === '') return;
  tx.need({ owners: [owner] });
  const busy = findOwnerTask(board, owner, except, (id) => tx.view(id));
  if (busy !== undefined)
    throw new ClaimError(
      'owner_busy',
      `${owner} already has task #${busy} in progress; finish it ('tasks done ${busy}${ownerFlag(owner)}') or release it ('tasks release ${busy}${ownerFlag(owner)}') first`,
      { task: busy, owner },
    );
}

// ---- mutations ---------------------------------------------------------

/** Checks that every id names an existing, non-deleted task other than `self`. */
function checkEdgeTargets(board: BoardFiles, self: number, ids: number[], lookup: TaskLookup): void {
  for (const id of ids) {
    if (id === self) throw new CycleError([self, self]);
    const task = lookup(id);
    if (!task) {
      if (existsSync(board.taskPath(id))) board.getTask(id); // throws the corruption with its position
      throw new TasksError('E_NOT_FOUND', `cannot link to task #${id}: it does not exist (see 'tasks list')`, { id });
    }
    if (task.status === 'deleted') throw new TasksError('E_INVALID', `cannot link to task #${id}: it is deleted`, { id });
  }
}

/** Creates a task; edges are written on both sides. */
export async function createTask(board: BoardFiles, input: CreateTaskInput, options: ActorOptions = {}): Promise<MutationResult> {
  const status = input.status === undefined ? 'pending' : checkStatus(input.status);
  checkSubject(input.subject);
  checkPriority(input.priority);
  checkLabels(input.labels ?? []);
  if (input.paths !== undefined) checkPaths(input.paths);
  if (input.key !== undefined) checkCreateKey(input.key);
  const owners = status === 'in_progress' ? [input.owner || options.actor || ''] : [];
  const linked = linkPatchIds(createLinks(input));
  const locked = [...(input.blockedBy ?? []), ...(input.blocks ?? []), ...linked, ...(input.parent ? [input.parent] : [])];
  const result = await board.transact({ owners, board: true, tasks: locked }, (tx) => {
    // Under the board lock, which every create holds: a second create with the key waits for the first and finds its task.
    const earlier = input.key === undefined ? undefined : taskWithCreateKey(board, input.key);
    return earlier ?? createInTx(board, tx, input, options);
  });
  const alreadyApplied = result.written.length === 0 && input.key !== undefined;
  return { task: result.value, written: result.written, unblocked: [], events: result.events, ...(alreadyApplied ? { alreadyApplied } : {}) };
}

async function createInTx(board: BoardFiles, tx: Transaction, input: CreateTaskInput, options: ActorOptions): Promise<Task> {
  const subject = checkSubject(input.subject);
  const status = input.status === undefined ? 'pending' : checkStatus(input.status);
  if (status === 'deleted') throw new TasksError('E_INVALID', 'a new task cannot start deleted');
  const blockedBy = normalizeIds(input.blockedBy ?? []);
  const blocks = normalizeIds(input.blocks ?? []);
  tx.need({ board: true, tasks: [...blockedBy, ...blocks] });
  const id = allocateId(board, tx);
  const view = (n: number) => tx.view(n);
  checkEdgeTargets(board, id, [...blockedBy, ...blocks], view);
  // A cycle through the new task needs a path from one of its dependents to one of its blockers.
  for (const b of blockedBy) {
    for (const d of blocks) {
      if (b === d) throw new CycleError([id, d, id]);
      const path = findCycle(b, d, view);
      if (path) throw new CycleError([id, ...path.slice(1, -1), b, id].filter((x, i, a) => i === 0 || x !== a[i - 1]));
    }
  }
  const owner = input.owner ?? (status === 'in_progress' ? (options.actor ?? '') : '');
  if (status === 'in_progress') {
    if (owner === '') throw new TasksError('E_INVALID', 'a task created in progress needs an owner (--owner)');
    assertOwnerFree(board, tx, owner, new Set());
    const open = blockedBy.filter((b) => !isClosed(view(b)!.status));
    if (open.length) throw new TasksError('E_BLOCKED', `task cannot start: blocked by ${open.map((b) => `#${b}`).join(', ')}`);
  }
  await tx.lockNewTask(id);
  if (tx.tryRead(id)) throw new TasksError('E_EXISTS', `task_${id}.json appeared meanwhile; run the command again`);
  const task: Task = {
    id,
    subject,
    description: input.description ?? '',
    status,
    owner,
    blockedBy: blockedBy.filter((b) => !isClosed(view(b)!.status)),
    blocks,
    extra: createRecord(),
  };
  if (input.activeForm !== undefined) task.activeForm = input.activeForm;
  const priority = checkPriority(input.priority);
  if (priority !== undefined) task.priority = priority;
  const labels = checkLabels(input.labels ?? []);
  if (labels.length) task.labels = labels;
  if (input.paths !== undefined) applyPaths(task, { paths: input.paths });
  applyVerify(task, input.verify);
  applyReviewRequired(task, input.review);
  if (input.metadata !== undefined) applyMetadata(task, input.metadata);
  if (input.key !== undefined) applyMetadata(task, { [CREATE_KEY]: input.key });
  if (input.parent !== undefined) applyParent(tx, task, input.parent);
  tx.put(task);
  for (const b of blockedBy) {
    const blocker = tx.edit(b);
    blocker.blocks = normalizeIds([...blocker.blocks, id]);
    tx.put(blocker);
  }
  for (const d of blocks) {
    const dependent = tx.edit(d);
    if (!isClosed(task.status)) dependent.blockedBy = normalizeIds([...dependent.blockedBy, id]);
    tx.put(dependent);
  }
  applyLinksInTx(board, tx, id, createLinks(input));
  tx.event({ type: 'created', task: id, owner: options.actor, subject });
  if (status === 'in_progress') tx.putLease(createLease(id, owner, null, board.config.leaseSeconds));
  tx.setHighWaterMark(id);
  return tx.read(id); // as staged: with the links put after it
}

/**
 * Changes any fields of a task, its edges and its status, in one locked
 * step. Every decision about status and owner is made from what is read
 * under the task's lock (compare-and-swap): taking over a task somebody
 * else holds needs `force`, and a change that keeps a task in progress for
 * the same owner keeps its claim record (lease) as it is.
 */
export async function updateTask(board: BoardFiles, id: number, patch: UpdateTaskInput, options: UpdateOptions = {}): Promise<MutationResult> {
  if (patch.subject !== undefined) checkSubject(patch.subject);
  checkPriority(patch.priority);
  checkLabels([...(patch.addLabels ?? []), ...(patch.removeLabels ?? [])]);
  // Bad globs are refused before any lock is taken.
  for (const list of [patch.paths, patch.addPaths]) if (list) checkPaths(list);
  if (patch.removePaths) checkPaths(patch.removePaths, { limits: false });
  const toStatus = patch.status === undefined ? undefined : checkStatus(patch.status);
  // A first guess at the locks; the transaction asks for more when what it reads needs them.
  const guess = board.peekTask(id);
  const edges = [...(patch.addBlockedBy ?? []), ...(patch.removeBlockedBy ?? []), ...(patch.addBlocks ?? []), ...(patch.removeBlocks ?? [])];
  const closing = toStatus === 'completed' || toStatus === 'deleted';
  const linked = linkPatchIds(patch);
  const tasks = [id, ...edges, ...linked, ...(closing && guess ? guess.blocks : []), ...(patch.parent ? [patch.parent] : [])];
  const owners = toStatus === 'in_progress' || patch.owner !== undefined ? [patch.owner ?? (guess?.owner || options.actor || '')] : [];
  const unblocked: number[] = [];
  // A new priority, a removed edge or a task back to pending changes what claim --next takes next.
  const moreClaimable = patch.priority !== undefined || patch.status !== undefined || !!patch.removeBlockedBy?.length || !!patch.removeBlocks?.length;
  const result = await board.transact({ owners, board: edges.length > 0 || linked.length > 0 || closing || patch.parent !== undefined, tasks }, (tx) => {
    unblocked.length = 0;
    if (moreClaimable) tx.refreshIndexOnCommit();
    for (const d of updateInTx(board, tx, id, patch, options)) unblocked.push(d);
  });
  const task = result.written.find((t) => t.id === id) ?? board.getTask(id);
  return { task, written: result.written, unblocked, events: result.events, ...parentsCompleted(result.events) };
}

/** The body of updateTask inside a transaction; returns the tasks it unblocked. */
function updateInTx(board: BoardFiles, tx: Transaction, id: number, patch: UpdateTaskInput, options: UpdateOptions): number[] {
  const before = tx.read(id);
  const toStatus = patch.status === undefined ? undefined : checkStatus(patch.status);
  const addBlockedBy = normalizeIds(patch.addBlockedBy ?? []);
  const removeBlockedBy = normalizeIds(patch.removeBlockedBy ?? []);
  const addBlocks = normalizeIds(patch.addBlocks ?? []);
  const removeBlocks = normalizeIds(patch.removeBlocks ?? []);
  const closing = toStatus === 'completed' || toStatus === 'deleted';
  const rewires = addBlockedBy.length || removeBlockedBy.length || addBlocks.length || removeBlocks.length || patch.parent !== undefined;
  if (rewires || closing) tx.need({ board: true });
  tx.need({ tasks: [...addBlockedBy, ...removeBlockedBy, ...addBlocks, ...removeBlocks, ...(closing ? [...before.blocks, ...addBlocks] : [])] });
  checkEdgeTargets(board, id, [...addBlockedBy, ...addBlocks], (n) => tx.view(n));

  const owner = decideOwner(before, patch, toStatus, options);
  assertReviewUntouched(before, { owner: owner.next, review: patch.review });
  if (owner.startsWork) assertOwnerFree(board, tx, owner.next, new Set([id]));

  const task = tx.edit(id);
  applyFields(task, patch);
  if (patch.parent !== undefined) applyParent(tx, task, patch.parent);
  tx.put(task);

  // Edges first, so a status change sees the new graph. Cycle checks read
  // through the transaction so edges added in this same step count.
  for (const b of addBlockedBy) linkInTx(board, tx, b, id);
  for (const d of addBlocks) linkInTx(board, tx, id, d);
  for (const b of removeBlockedBy) unlinkInTx(board, tx, b, id);
  for (const d of removeBlocks) unlinkInTx(board, tx, id, d);
  applyLinksInTx(board, tx, id, patch);

  const unblocked: number[] = [];
  if (toStatus !== undefined && toStatus !== before.status) for (const d of changeStatus(board, tx, before, toStatus, owner.next, options)) unblocked.push(d);
  else if (owner.startsWork) {
    // In progress already, for a new owner (handed over, or taken over with force): the claim is theirs now.
    const edited = tx.edit(id);
    edited.owner = owner.next;
    tx.put(edited);
    tx.putLease(createLease(id, owner.next, null, board.config.leaseSeconds));
    tx.event({ type: 'started', task: id, owner: owner.next, previousOwner: before.owner });
  } else if (owner.keepsClaim && !tx.readLease(id) && !inReview(before)) {
    // Kept in progress but without a record (set by hand): record it, so single-in-progress sees it.
    tx.putLease(createLease(id, owner.next, null, board.config.leaseSeconds));
  }
  const changed = Object.keys(patch).filter((k) => {
    const value = (patch as Record<string, unknown>)[k];
    return k !== 'status' && value !== undefined && !(Array.isArray(value) && value.length === 0 && /(Labels|Related|DiscoveredFrom)$/.test(k));
  });
  if (changed.length) tx.event({ type: 'updated', task: id, owner: options.actor, fields: changed });
  return unblocked;
}

/**
 * Who owns the task after the update, decided on what was read under the
 * lock (compare-and-swap): another owner's task is not taken over, released
 * or finished by accident. `keepsClaim`: it stays in progress for its
 * holder; `startsWork`: it is (or stays) in progress for someone new.
 */
function decideOwner(
  before: Task,
  patch: UpdateTaskInput,
  toStatus: TaskStatus | undefined,
  options: UpdateOptions,
): { next: string; keepsClaim: boolean; startsWork: boolean } {
  const id = before.id;
  const finalStatus = toStatus ?? before.status;
  const holder = before.status === 'in_progress' ? before.owner : '';
  const actorIsOther = holder !== '' && options.actor !== undefined && options.actor !== holder;
  let next: string;
  if (patch.owner !== undefined) next = patch.owner;
  else if (toStatus === 'in_progress' && actorIsOther) next = options.actor!;
  else next = before.owner || (toStatus === 'in_progress' ? (options.actor ?? '') : '');
  if (actorIsOther && !options.force) {
    if (finalStatus === 'in_progress' && next !== holder)
      throw new ClaimError('already_claimed', `task #${id} is already claimed by ${holder}; add --force to take it over`, { task: id, owner: holder });
    if (toStatus === 'pending' || toStatus === 'completed')
      throw new TasksError('E_NOT_OWNER', `task #${id} belongs to ${holder}; add --force to change its status anyway`, { id, owner: holder });
  }
  const keepsClaim = holder !== '' && finalStatus === 'in_progress' && next === holder;
  return { next, keepsClaim, startsWork: finalStatus === 'in_progress' && !keepsClaim };
}

/** The fields of `patch` that are not edges or status, applied to `task`. */
function applyFields(task: Task, patch: UpdateTaskInput): void {
  if (patch.subject !== undefined) task.subject = patch.subject;
  if (patch.description !== undefined) task.description = patch.description;
  if (patch.activeForm === null) delete task.activeForm;
  else if (patch.activeForm !== undefined) task.activeForm = patch.activeForm;
  if (patch.owner !== undefined) task.owner = patch.owner;
  if (patch.priority !== undefined) {
    const priority = checkPriority(patch.priority);
    if (priority === undefined) delete task.priority;
    else task.priority = priority;
  }
  if (patch.addLabels?.length || patch.removeLabels?.length) applyLabels(task, checkLabels(patch.addLabels ?? []), checkLabels(patch.removeLabels ?? []));
  applyPaths(task, patch);
  applyVerify(task, patch.verify);
  applyReviewRequired(task, patch.review);
  if (patch.metadata !== undefined) applyMetadata(task, patch.metadata);
}

/** Moves the task from `before.status` to `toStatus` (started, back to pending, or closed); returns the tasks it unblocked. */
function changeStatus(board: BoardFiles, tx: Transaction, before: Task, toStatus: TaskStatus, nextOwner: string, options: UpdateOptions): number[] {
  const id = before.id;
  const edited = tx.edit(id);
  checkTransition(edited, toStatus);
  if (toStatus === 'in_progress') {
    const open = openBlockers(edited, (n) => tx.view(n));
    if (open.length)
      throw new TasksError('E_BLOCKED', `task #${id} is blocked by ${open.map((b) => `#${b}`).join(', ')}; finish those first`, {
        id,
        blockedBy: open,
      });
    edited.status = 'in_progress';
    edited.owner = nextOwner;
    tx.put(edited);
    tx.putLease(createLease(id, nextOwner, null, board.config.leaseSeconds));
    tx.event({ type: 'started', task: id, owner: nextOwner });
    return [];
  }
  if (toStatus === 'pending') {
    leaveReview(edited);
    tx.put(Object.assign(edited, { status: 'pending' as const }));
    tx.dropLease(id);
    tx.event({ type: 'released', task: id, owner: options.actor, previousOwner: before.owner });
    return [];
  }
  if (toStatus === 'completed') assertNoOpenChildren(board, tx, id, 'complete');
  // Completed by an update, a task that requires review goes into review as `tasks done` puts it (docs/protocol.md, "Review").
  if (toStatus === 'completed' && finishesIntoReview(board, edited)) {
    enterReviewInTx(tx, id, options);
    return [];
  }
  return closeInTx(board, tx, id, toStatus, options);
}

/** Adds "blocker blocks waiter" on both sides inside a transaction, refusing cycles. */
function linkInTx(board: BoardFiles, tx: Transaction, blocker: number, waiter: number): void {
  const cycle = findCycle(blocker, waiter, (n) => tx.view(n));
  if (cycle) throw new CycleError(cycle);
  const b = tx.edit(blocker);
  const w = tx.edit(waiter);
  b.blocks = normalizeIds([...b.blocks, waiter]);
  // A finished blocker no longer blocks: its edge is kept as history on its side only.
  if (!isClosed(b.status)) w.blockedBy = normalizeIds([...w.blockedBy, blocker]);
  tx.put(b);
  tx.put(w);
  tx.event({ type: 'edge.added', task: waiter, blockedBy: blocker });
}

/** Removes "blocker blocks waiter" from both sides inside a transaction. */
function unlinkInTx(board: BoardFiles, tx: Transaction, blocker: number, waiter: number): void {
  const w = tx.tryRead(waiter) ? tx.edit(waiter) : undefined;
  const b = tx.tryRead(blocker) ? tx.edit(blocker) : undefined;
  let changed = false;
  if (w && removeId(w.blockedBy, blocker)) {
    changed = true;
    tx.put(w);
  }
  if (b && removeId(b.blocks, waiter)) {
    changed = true;
    tx.put(b);
  }
  if (changed) tx.event({ type: 'edge.removed', task: waiter, blockedBy: blocker });
}

/** Adds the edge "`blocker` blocks `task`" on both sides, refusing cycles. */
export async function addDependency(board: BoardFiles, task: number, blocker: number, options: ActorOptions = {}): Promise<MutationResult> {
  return updateTask(board, task, { addBlockedBy: [blocker] }, options);
}

/** Removes the edge "`blocker` blocks `task`" from both sides. */
export async function removeDependency(board: BoardFiles, task: number, blocker: number, options: ActorOptions = {}): Promise<MutationResult> {
  return updateTask(board, task, { removeBlockedBy: [blocker] }, options);
}

/**
 * TodoWrite-style batch: creates items without an id and replaces the
 * given fields of items with one, in one transaction: every item is
 * applied, or (on the first refusal) none.
 */
export async function batchWrite(board: BoardFiles, items: BatchItem[], options: ActorOptions = {}): Promise<{ tasks: Task[]; unblocked: number[] }> {
  if (!Array.isArray(items) || items.length === 0) throw new TasksError('E_INVALID', 'a batch needs at least one item');
  const owners = items.filter((i) => i.status === 'in_progress').map((i) => i.owner ?? options.actor ?? '');
  const ids = items.flatMap((i) => [...(i.id !== undefined ? [i.id] : []), ...(i.blockedBy ?? [])]);
  const result = await board.transact({ owners, board: true, tasks: ids }, async (tx) => {
    const tasks: Task[] = [];
    const unblocked: number[] = [];
    for (const [index, item] of items.entries()) {
      try {
        if (item.id === undefined) {
          const wanted = item.status ?? 'pending';
          let task = await createInTx(
            board,
            tx,
            {
              subject: item.subject as string,
              description: item.description,
              activeForm: item.activeForm ?? undefined,
              owner: item.owner,
              status: wanted === 'completed' ? 'pending' : wanted,
              blockedBy: item.blockedBy,
              ...(typeof item.parent === 'number' ? { parent: item.parent } : {}),
              metadata: item.metadata,
              priority: item.priority,
              labels: item.labels,
            },
            options,
          );
          if (wanted === 'completed') {
            updateInTx(board, tx, task.id, { status: 'completed' }, options);
            task = tx.read(task.id);
          }
          tasks.push(task);
        } else {
          const current = tx.read(item.id);
          const patch: UpdateTaskInput = {
            subject: item.subject,
            description: item.description,
            activeForm: item.activeForm,
            owner: item.owner,
            status: item.status,
            metadata: item.metadata,
            priority: item.priority,
            ...(item.parent !== undefined ? { parent: item.parent } : {}),
          };
          if (item.labels !== undefined) {
            const want = checkLabels(item.labels);
            patch.addLabels = want;
            patch.removeLabels = (current.labels ?? []).filter((l) => !want.includes(l));
          }
          if (item.blockedBy !== undefined) {
            const want = normalizeIds(item.blockedBy);
            patch.addBlockedBy = want.filter((b) => !current.blockedBy.includes(b));
            patch.removeBlockedBy = current.blockedBy.filter((b) => !want.includes(b));
          }
          for (const d of updateInTx(board, tx, item.id, patch, options)) unblocked.push(d);
          tasks.push(tx.read(item.id));
        }
      } catch (error) {
        if (error instanceof TasksError)
          throw new TasksError(error.code, `item ${index + 1} of the batch: ${error.message} (nothing was written)`, error.details, {
            cause: error,
          });
        throw error;
      }
    }
    return { tasks, unblocked: normalizeIds(unblocked) };
  });
  return result.value;
}

/**
 * Appends `{at, owner, text}` to a task's notes, in one transaction under the
 * task's lock (docs/protocol.md, "One task, one file"). Any status takes a
 * note: what was learned about a finished task is worth keeping too.
 */
export async function addNote(board: BoardFiles, id: number, text: string, options: ActorOptions & { at?: Date } = {}): Promise<MutationResult> {
  const body = checkNoteText(text);
  const result = await board.transact({ tasks: [id] }, (tx) => {
    const task = tx.edit(id);
    appendNote(task, { at: (options.at ?? new Date()).toISOString(), owner: options.actor ?? '', text: body });
    tx.put(task);
    tx.event({ type: 'updated', task: id, owner: options.actor, fields: ['notes'] });
  });
  return { task: result.written.find((t) => t.id === id) ?? board.getTask(id), written: result.written, unblocked: [], events: result.events };
}
